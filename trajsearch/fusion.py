"""Fusing the dense and lexical legs, and deciding when a query needs both.

One small place for every fusion decision (after txtai's ``hybrid.py``):
reciprocal rank fusion by default, a weighted score blend as the option, the
query classifier that picks ``hybrid`` for pasted log lines, and
:class:`FusionConfig` (weights per kind of query, pool depth, verbatim-first and
near-verbatim lifts); the façade only fetches the legs and the rows.

RRF keeps ranks only, so what a leg knows beyond its order is lost: a pasted line is
held by one row and nearly held (another version's message, a changed number) by
others, and only a look at the rows' text tells them from rows sharing a few words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Collection, Mapping, Sequence

from .tracebacks import CHAINED, FRAME
from .vocab import MODES


#: RRF's constant: large enough that rank 1 vs 2 is not decisive on its own.
RRF_K = 60

#: Every query is searched with these (twice), so each alternative costs linear time in the query: a path
#: starts only where its run of ``[\w.-]`` starts (the lookbehind) and never gives that run back (``++``).
#: From inside a run it would scan to the run's end and fail there as it did from its start, so one long
#: unbroken token (a pasted 20,000-character hex dump) took seconds, holding the GIL (probe I, I1).
_LOG_SIGNS = re.compile(
    r"""(
        \b[A-Z][A-Za-z]*(Error|Exception|Exit|Warning)\b   # exception class names
      | \b(exit|return)\s*code\b | \bexited\swith\s(?:non-zero\s)?(?:code|status)\b | \breturncode\b | \berrno\b
      | Traceback | \bFAILED\b | \bERROR\b | \bfatal:
      | (?<![\w.-])[\w.-]++/[\w./-]+                       # paths
      | \b\w+\.(py|js|ts|go|rs|java|rb|sh|yaml|yml|json|toml)\b
      | \b[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]+\b             # snake_case identifiers / tool names / ids
      | \s--?[a-z][\w-]*                                   # command-line flags
      | \b\d{3,}\b                                         # codes, ports, line numbers
      | [(){}\[\]<>=`'"]
      | \b\d+%?\s(?:tests?\s)?(?:passed|failed|failures?|errors?|skipped|ignored|pending|examples?|tests?|total|todo
                                |measured)\b              # a test runner's counts (cargo, jest, rspec, TAP; ctest's
                                                           # ``50% tests passed, 1 tests failed out of 2``, where a
                                                           # title's ``Fix 3 type errors`` is no tally, RGEN2)
      | :\s+(?:Failed|Passed|Succeeded|Aborted|Errored)!\s*$
                                                           # an outcome under its label as MTP prints it (``Test run
                                                           # summary: Failed!``; a title's ``CI pipeline status:
                                                           # failed`` is none, RGEN2)
      | \s\|\s                                            # a shell's pipe
      | \b(?:error|warning|fatal)(?:\[\w+\])?:                # a compiler's or runtime's level (go, gcc, rustc)
    )""",
    re.X,
)


#: Signs that a *short* line is a log record: a leading ``Name:`` label (``Error: not found``,
#: ``KeyError: 'x'``, ``fatal: ...``), a code such as ``E501``, a dunder name.
_SHORT_LOG_SIGNS = re.compile(r"^\s*[A-Za-z_][\w.]*:(\s|$) | \b[A-Z]{2,}\d+\b | \b__\w+__\b", re.X)

# -- telling prose (task descriptions, questions) from pasted logs, traces and commands ------------

#: English function words: the glue of sentences, rare in logs, code and commands.
_FUNCTION_WORDS = frozenset("""
a an the to of in on at for with from by about as into onto than and or but if so because when while where
which who whom whose what how why is are was were be been being am do does did have has had can could should
would will shall may might must not no nor i me my we us our you your he him his she her it its they them
their this that these those there here please want wants need needs over under after before between through
during without within up down out off again then now still even instead also just only very too more most
other some such each both all any few same own get gets got using use used make makes made it's i'm don't
doesn't can't isn't i'd i'll you're there's that's let's
""".split()) | frozenset("""
der die das den dem des ein eine einen einem einer und oder ist nicht kein keine für mit von zu zum zur im auf
ich du wir ihr sie es mein meine bitte kann soll wie warum schon auch noch dass wenn aber
le la les un une des du et est sont pas pour dans sur avec qui que je tu nous vous il elle ce cette mon ma mes
ne se au ou mais où
el en los las del es son por para con una que su mi lo como pero está qué
os das dos não com em um uma meu minha seu sua mas está
il lo gli di della dello che mi è non per sono
het een niet voor met ik je wij zijn maar
и в во не на я что с по это как у к из за для мне меня мой моя но или да нет пожалуйста
""".split())
#: Letters of scripts written without spaces between words (Han, kana), or with few (Hangul): a sentence of them
#: is one or two "words" to ``split``, so the word counts below cannot see it (see :func:`_cjk_prose`).
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
#: What stands between CJK letters that is not a word of them: runs of Latin letters, digits and code.
_NON_CJK_WORD = re.compile(r"[^\s\u3000-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
                           r"\uff00-\uffef]+")
#: A line of CJK prose holds at least this many CJK letters ...
_CJK_MIN = 4
#: ... and at least this many for each run of other characters (a word, a name, a path) in it.
_CJK_PER_WORD = 2
#: A plain word: letters only (any alphabet's: ``möchte``, ``Rückerstattung``, ``ошибку``), no ASCII capital after its
#: first, perhaps quoted or followed by punctuation.
_PLAIN_WORD = re.compile(r"""^["'(*_`«„]*[^\W\d_](?:(?![A-Z])[^\W\d_])*(?:'[a-z]+)?["'`*_,.;:!?)»“]*$""")
#: Fenced code (``` ... ```), and markdown structure (headings, bold labels, fences): a written description.
_FENCE = re.compile(r"```.*?(?:```|\Z)", re.S)
#: (Leading blanks of the line itself only: ``\s*`` ran on across the newlines of every following
#: blank line, from each line's start, so a query of many blank lines took quadratic time; the
#: same constructs are found, each from its own line, probe I, I1.)
_MARKDOWN = re.compile(r"^[^\S\n]*+(?:\#{1,6}\s+\S|\*\*[^*]+\*\*|```)", re.M)
#: How a line of a log, a trace or a diff starts: a ``label:``, ``Traceback``, ``File "..."``, pytest's
#: ``E ``/``FAILED``/``ERROR``, a prompt (``$ ``, ``>>>``), a diff marker, a comment, a line number.
_LOG_START = re.compile(r"""^\s*(?:\S+:(?:\s|$)|Traceback\b|File\s"|E\s|FAILED\b|ERROR\b|PASSED\b|\$\s|>>>|[+-]{1,3}\s|@@
                           |\#|\d+[:|\t-]|\|(?:\s|$)|=\s[a-z]+:\s|(?:not\s)?ok\s\d+\b|[●○✓✔✕✗✘×]\s|[A-Z][A-Z0-9_]{3,}\s{2}\S)""", re.X)
#: A test runner's line starts: TAP's ``ok 2 - ...`` / ``not ok 1 - adds`` (node --test, tape), jest's ``● Test suite
#: failed to run`` and its passed / failed marks (``✓``, ``✕``), mocha's ``✔`` (the last four in _LOG_START above);
#: pnpm's code before its message, two blanks between (`` ELIFECYCLE  Test failed.``, `` ERR_PNPM_X  Failed to ...``,
#: pnpm <= 10; probe 53, RGEN).
#: A level opening a long line (``ERROR 1064 (42000): You have an error in your SQL syntax; ...``): a log record
#: however many words its message has.
#: ``CRITICAL`` only as a logger writes it (``[CRITICAL]``, ``CRITICAL:root:...``): ``CRITICAL: Respond with TEXT
#: ONLY. ...`` opens many a prompt (probe 53, RGEN).
_LEVEL_START = re.compile(r"^\s*(?:\[?(?:ERROR|FATAL|FAILED|FAIL|PANIC)\b|\[CRITICAL\]|CRITICAL:\S)")
#: A program's message, whatever its words read like: under a level in another language (``Erreur : impossible de
#: trouver ou charger la classe principale X``, ``Erro: Não foi possível ...``, ``Causé par : java.lang...``: French
#: typography's blank before the colon is how a French catalogue prints it, where an English program prints none, so
#: ``Error : a bytes-like object ...`` stays a title, a writer's), or under the name it is about, which its message names
#: again in quotes (PowerShell's ``foo: The term 'foo' is not recognized as a name of a cmdlet, ...`` and ``X : The term
#: 'X' ...``: a word of the message before the name, where a title's topic is quoted first, ``docs: 'docs' build
#: fails``); or a test a runner reports (:func:`_runner_report`). Each reads as a title or a sentence (round 21, GEN2:
#: tests/fixtures/runner-errors).
_PROGRAM_MESSAGE = re.compile(r"""^\s*(?:(?i:fatal|astuce|hinweis|ayuda|dica|suggerimento|подсказка  # git's hint
                                       |erreur|fehler|erro|errore|fout|ошибка|avertissement|warnung|advertencia|aviso
                                       |avviso|waarschuwing|предупреждение|causé\spar|causad[oa]\spor|causato\sda
                                       |verursacht\sdurch)\s?:\s
                                    |([^\s:'"`]+)\s?:\s+[^\s'"`].*?\s(['"`])\1\2)""", re.X)
#: An outcome in capitals ending a line, as a runner reports a test, and what names the test before it in a runner's
#: shape: Gradle's ``com.x.FooSpec > should return a promise of true if ... FAILED`` and ``> Task :test FAILED``,
#: cargo's ``test tests::adds ... FAILED``, a dotted name, a task path. A title says so in words (``All tests in
#: Gradle build are SKIPPED``, junit-team/junit-framework#2736; ``SkipException results in FAILED test instead of
#: SKIPPED``, telekom/testerra#161): round 21, RGEN2.
_OUTCOME_END = re.compile(r"\s(?:FAILED|PASSED|SKIPPED|ERROR)\s*$")
_RUNNER_SHAPE = re.compile(r"^>\s|\s>\s|::|\s\.{3}\s|[\w$]\.[A-Za-z_$]|(?:^|\s):\w")


def _runner_report(line: str) -> bool:
    """A test reported by a runner: an outcome in capitals ending the line after a runner's shape
    (see :data:`_OUTCOME_END`)."""
    end = _OUTCOME_END.search(line)
    return end is not None and _RUNNER_SHAPE.search(line, 0, end.start()) is not None


#: A program pointing at its own help, in any language, the command quoted as its catalogue quotes it (``Try 'chmod
#: --help' for more information.``, ``Proveu «chmod --help» per a ...``, ``請嘗試執行「chmod --help」取得更多訊息。``,
#: ``For more information about this error, try `rustc --explain E0382`.``, ``Use "go help build" for ...``): the
#: quoted help command, then nothing but what it is for (:func:`_help_pointer`). Or a step in progress, short, its
#: ellipsis after a word (apt's ``Reading state information...``, ``Leyendo la información de estado...``, ``상태
#: 정보를 읽는 중입니다...``) or spaced and maybe followed by how it went (pip's ``Installing build dependencies ...
#: done``, apt's ``Setting up curl (7.81.0-1ubuntu1.15) ...``); a title's ``upgrading to pytest 8...`` ends on a
#: number (round 22, GEN3 and its review).
_HELP_COMMAND = re.compile(r"""[`'"«„“「‘]\s*(?:[\w.<>-]+\s+)*?(?:--help|-h|--explain(?:\s+\w+)?|(?<=\s)help(?:\s+[\w.-]+)*)
                               \s*[`'"»“”」’]""", re.X)
#: What a help pointer's quoted command is for: nothing, or a phrase opening on "for" (``for more information.``,
#: ``per a obtenir més informació.``, ``dla uzyskania informacji.``) or in a script no English sentence is in; a
#: sentence about the command goes on with what it does (``... `django-admin --help` the list of commands is missing
#: ...``, ``'pytest --help' crashes when ...``).
_POINTER_TAIL = re.compile(r"""^(?:[^\w\s]*|(?:(?:for|per|para|pour|für|dla|för|voor|um)\s|[^\sA-Za-z(]|\([^\sA-Za-z]).{0,60}[.。]
                               |\S+[.。])$""", re.X | re.I)
_PROGRESS = re.compile(r"(?:[^\W\d_](?:\.{3}|…)|\s(?:\.{3}|…)(?:\s[^\W\d_]+)?)$")
_PROGRESS_WORDS = 8


def _help_pointer(line: str) -> bool:
    """A program's pointer at its help (:data:`_HELP_COMMAND`): what follows the quoted command is only what it is
    for (:data:`_POINTER_TAIL`), so a sentence that quotes a help command stays a sentence."""
    return any(_POINTER_TAIL.match(line[found.end():].strip()) for found in _HELP_COMMAND.finditer(line))


def _program_message(line: str) -> bool:
    """A program's message or a runner's report that reads as a title or a sentence (:data:`_PROGRAM_MESSAGE`,
    :func:`_help_pointer`, :data:`_PROGRESS`)."""
    return (_PROGRAM_MESSAGE.match(line) is not None or _runner_report(line) or _help_pointer(line)
            or (_PROGRESS.search(line) is not None and len(line.split()) <= _PROGRESS_WORDS))
#: Ruby's exception after its message: ``undefined method `name' for nil:NilClass (NoMethodError)``.
_RUBY_EXCEPTION = re.compile(r"\((?:[A-Z]\w*::)*[A-Z]\w*(?:Error|Exception)\)\s*$")


def _ruby_exception(line: str) -> bool:
    """Ruby's uncaught exception (see :data:`_RUBY_EXCEPTION`), whose message starts in lower case (``undefined
    method``, ``uninitialized constant``, ``cannot load such file``, ``wrong number of arguments``): a line opening
    with a capital that reads as a sentence or a title names the error it is about (``Python raises an error
    (ValueError)``, probe 53, RGEN), as a title does."""
    if not _RUBY_EXCEPTION.search(line):
        return False
    return not (line.lstrip()[:1].isupper() and (_sentence(line) or _title(line)))


#: How a line of code or a shell command starts.
_CODE_START = re.compile(r"""^\s*(?:import\s|from\s\S+\simport\s|return\b|def\s|class\s|raise\s|assert\s|if\s.*:$|for\s.*\sin\s
                           |while\s|with\s|print\(|self\.|@\w|\w+(?:\.\w+)*\s*[-+*/]?=\s|[\]\)\}]|\.\.\.
                           |(?:cd|ls|cat|head|tail|grep|rg|find|sed|awk|git|python3?|pip3?|pytest|tox|make|npm|npx|yarn
                             |node|docker|kubectl|curl|wget|echo|export|mkdir|rm|cp|mv|chmod|sudo|bash|sh|nl|wc|diff
                             |patch|apt(?:-get)?|uv|poetry|cargo|go|java|mvn|gradle)\s)""", re.X)
#: An exception label anywhere (``... AttributeError: x``), or an OS error's code in brackets as Python prints an
#: ``OSError`` (``[Errno 2] No such file or directory``, ``[WinError 2] The system cannot find the file specified``,
#: Python 2's ``[Error 2] ...``), its class cut off by the program or the writer (round 23, GEN4: it read as a
#: title). A title's tag is a word (``[Bug]``) or a version (``[version 2.20.0] TypeError: ...``).
_EXCEPTION_LABEL = re.compile(r"\b[A-Z]\w*(?:Error|Exception|Warning|Exit|Interrupt)\b:|\[(?i:errno|winerror|error)\s-?\d+\]")
#: An exception's repr inside a log line: ``(Caused by NameResolutionError("...``, ``: ValueError('x')``; prose
#: that names one ("raises ValidationError('...')") has no bracket or colon before it.
_EXCEPTION_CALL = re.compile(r"""(?:[(\[:,]\s*|Caused\sby\s)[A-Z]\w*(?:Error|Exception)\(['"<]""")
#: A tool call as step rows render it (``think Check ...``).
_TOOL_CALL = re.compile(r"^[a-z][a-z0-9_]*\s+[A-Z]")
_DOTTED = re.compile(r"\b[A-Za-z_]\w*\.[A-Za-z_]\w*")
_QUESTION = re.compile(r"^(?:how|why|what|when|where|which|who|whose|can|could|should|would|is|are|was|were|does|do"
                       r"|did|will|has|have)\b", re.I)
#: A block (several lines, or a line of this many words or more) is judged by its share of prose.
_BLOCK_WORDS = 25
#: A block is prose when lines of prose hold at least this share of its words.
_PROSE_SHARE = 0.2
#: A line of at most this many words and no sentence is keywords (or an output line): exact terms matter.
_KEYWORDS = 3


#: A word in quotes of its own: a literal a program quotes (getopt's ``invalid option -- 'a'``, ``cannot stat 'I'``),
#: no function word of a sentence (round 23, GEN4: ``useradd: invalid option -- 'a'`` read as a title by its ``a``).
_QUOTED_WORD = re.compile(r"""^(["'`‘“«])[^"'`]+["'`’”»][,.;:!?)]*$""")


def _function_share(words: list[str]) -> float:
    """The share of ``words`` that are function words (:data:`_FUNCTION_WORDS`), a quoted literal none."""
    return sum(w.lower().strip("\"'(),.;:!?*`") in _FUNCTION_WORDS and not _QUOTED_WORD.match(w)
               for w in words) / max(1, len(words))


#: How a log record written in Chinese, Japanese or Korean starts: a timestamp, a level (``ERROR``, ``[INFO]``), a CJK
#: level label with either colon (git's ``致命错误：``, ``错误：``, ``提示：``; rustc's ``警告：``; ``エラー:``, ``오류:``),
#: a program's ``[tag]`` (a number, an underscore or a lowercase name: ``[WinError 2]``, ``[hybrid_search]``; an issue
#: title's ``[Bug]`` / ``[功能]`` is none, review RALL-B), a ``label :`` (PowerShell's ``Start-Process : ...``), an
#: ``x=2,``. Its message reads as a sentence, but the line is a program's (probe 53, RGEN). A task's own labels (``## 目标``,
#: ``任务：``, ``1. Handoff(...)``) are none of these. Nor is a JSON record (Codex's exec output, its Korean string
#: literals making up most of its letters) CJK prose.
_CJK_LOG_START = re.compile(r"""^\s*(?:\[?\d{4}[-/.]\d{1,2}[-/.]\d{1,2}[T\s]\d{1,2}:\d{2}|\[?\d{1,2}:\d{2}:\d{2}
                              |\[?(?:ERROR|FATAL|WARN(?:ING)?|INFO|DEBUG|TRACE|CRITICAL|NOTICE)\b
                              |\[(?=[^\]\n]{1,40}\])(?:[^\]\n]*[\d_]|[a-z][\w.-]*\])
                              |(?:致命错误|错误|錯誤|致命錯誤|警告|提示|注意|信息|エラー|致命的エラー|오류|에러|경고)\s*[:：]
                              |\S+\s:\s|\w+=\S*,|[\[{]\s*")""", re.X)

#: One run of CJK letters between Latin words: a name in a line of English (OpenAI Agents' ``agent リサーチ担当 failed``,
#: ``chain リサーチ担当 failed``), judged by its other words as any English line is (probe 53, RGEN).
_CJK_NAME_INSIDE = re.compile(r"^\s*[A-Za-z]\w*\s+[^\sA-Za-z]*?" + _CJK.pattern + r"+[^\s]*\s+[A-Za-z]\w*[.!]?\s*$")


def _cjk_prose(line: str) -> bool:
    """A line written in Chinese, Japanese or Korean: at least :data:`_CJK_MIN` CJK letters, and
    :data:`_CJK_PER_WORD` of them for each run of other characters (``修复 src/main.rs 中的编译错误``,
    ``帮我创建一个avd,需要支持adb root``). Its words are not split by spaces, so :func:`_prose_line` and
    :func:`_sentence` counted such a sentence as one to three words: keywords, or a log line by its path
    (probe 53, GEN: 18 of the real Claude Code and Codex prompts in tests/fixtures went to hybrid)."""
    if _CJK_LOG_START.match(line) or _CJK_NAME_INSIDE.match(line):
        return False
    letters = len(_CJK.findall(line))
    return letters >= _CJK_MIN and letters >= _CJK_PER_WORD * len(_NON_CJK_WORD.findall(line))


def _prose_line(line: str) -> bool:
    """A line of natural language: six words or more, mostly plain words, a fifth of them function words
    (English's, and the commonest of a few other languages'); or a line of CJK prose."""
    if _cjk_prose(line):
        return True
    words = line.split()
    if len(words) < 6:
        return False
    plain = sum(_PLAIN_WORD.match(w) is not None for w in words)
    return plain >= 0.6 * len(words) and _function_share(words) >= 0.2


#: pytest's failure report: the failing line (``>``), the error lines (``E``), the location (``path:NNN: Error``).
_PYTEST_LINE = re.compile(r"^(?:[>E]\s{3}|\S+:\d+:\s[A-Za-z_][\w.]*$)")
#: An exception line (``KeyError: 'id'``, ``django.core.exceptions.FieldError: ...``): the error itself, not prose.
_EXCEPTION_LINE = re.compile(r"^\s*[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning)\b(?::|$)")


def _trace_lines(lines: list[str]) -> set[int]:
    """Positions of the lines that belong to a pasted Python traceback or pytest failure report.

    Such a line is trace whatever it reads like: a frame's source line (``raise TypeError("Legend
    needs either Axes or Figure as parent")``), a comment in the source pytest lists, the exception's
    message and the sentences between chained tracebacks are words of the program, not the writer's.
    """
    trace: set[int] = set()
    for pos, line in enumerate(lines):
        frame = FRAME.match(line)
        if frame:  # the frame and the source, carets, locals indented under it
            trace.add(pos)
            depth = len(frame.group(1))
            for below in range(pos + 1, len(lines)):
                if len(lines[below]) - len(lines[below].lstrip()) <= depth:
                    break
                trace.add(below)
        elif CHAINED.match(line) or _EXCEPTION_LINE.match(line):
            trace.add(pos)
        elif _PYTEST_LINE.match(line):
            trace.add(pos)
            if line.startswith(">"):
                trace.update(_listed_source(lines, pos))
    return trace


def _listed_source(lines: list[str], failing: int) -> list[int]:
    """The source pytest lists around a failing (``>``) line: the lines next to it indented by four."""
    listed = []
    for step in (-1, 1):
        pos = failing + step
        while 0 <= pos < len(lines) and lines[pos].startswith("    "):
            listed.append(pos)
            pos += step
    return listed


def _prose_share(text: str) -> float:
    """The share of ``text``'s words that stand in lines of prose, a traceback or pytest report
    set aside: a pasted trace with a line of output around it is a log, an issue quoting a long
    trace is judged by the words its writer wrote around it."""
    lines = [line for line in text.splitlines() if line.strip()]
    trace = _trace_lines(lines)
    rest = [line for pos, line in enumerate(lines) if pos not in trace]
    prose = sum(_word_count(line) for line in rest if _prose_line(line))
    return prose / max(1, sum(_word_count(line) for line in rest))


def _word_count(line: str) -> int:
    """About how many words ``line`` holds: its space-separated ones, and one for each two CJK letters (which
    stand unseparated: a paragraph of Chinese weighed as a few words was outweighed by one command beside it)."""
    return len(line.split()) + len(_CJK.findall(line)) // 2


#: A sentence about code may open with the code it is about: ``model_to_dict() should ...``, ```io.fits.Card` may ...``
#: (a call, a backticked or dotted name, snake_case or CamelCase; a plain word is no code).
_NAMED_SUBJECT = re.compile(r"""^(?:`[^`\s]+`|[A-Za-z_][\w.]*\(\)|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+|[a-z]+_\w+
                             |[A-Z][a-z0-9]+[A-Z]\w*)\s""", re.X)


def _sentence(line: str) -> bool:
    """One short line that reads as a sentence: seven words or more, a capital or a question word
    first, three in ten of them function words."""
    words = line.split()
    return len(words) >= 7 and (line[0].isupper() or _QUESTION.match(line) is not None
                                or _NAMED_SUBJECT.match(line) is not None) and _function_share(words) >= 0.3


#: The verbs a one-line ask of a coding agent opens with (``Fix the failing test in src/utils/parser.ts``).
_ASK_VERBS = frozenset("""fix add implement refactor rename create write update make remove delete migrate convert port
upgrade investigate debug help explain document set build move extract replace improve optimize optimise support
handle change clean configure install deploy generate review check find""".split())


def _imperative(line: str) -> bool:
    """A one-line ask of an agent: a capitalised verb of :data:`_ASK_VERBS`, then an article, a pronoun or a plain
    word, five words or more, most of them plain, and a function word among them (``Add retry logic to the HttpClient
    in pkg/net/client.go``). It names the file or class it is about as an issue's title does, but says too few
    function words for :func:`_sentence` (probe 53, GEN: such asks went to hybrid by their path or CamelCase name).
    A program's message seldom opens so; where one does (``Update failed: ...``), the label is a log's."""
    words = line.split()
    if len(words) < 5 or not words[0][:1].isupper() or words[0].lower() not in _ASK_VERBS:
        return False
    if _PLAIN_WORD.match(words[1]) is None or _LABEL_INSIDE.search(line) or _SHELL_JOIN.search(line):
        return False
    plain = sum(_PLAIN_WORD.match(w) is not None for w in words)
    return plain >= 0.6 * len(words) and _function_share(words) > 0


#: A label inside a line (``Update failed: x``) or ending it (``Help on class catch_warnings in module warnings:``,
#: Python's ``help()``), and a shell's joined commands: a log's or a command's shapes.
_LABEL_INSIDE = re.compile(r"\w:(?:\s|$)|\s(?:&&|\|\|?|;)\s|\d>&\d|[,(\[{]$")
_SHELL_JOIN = re.compile(r"^\S+\s+-{1,2}\w|\$\(|`")


#: What no title starts with: a path, a string literal or docstring, a line number label (``Line 1249:``), a
#: diff's added line, an HTML tag, a commit hash (``git log --oneline``), a keyword argument, a parameter's
#: docstring label (``max_samples : int``); a snake_case name followed by quoted or JSON arguments (a tool call).
_NOT_TITLE_START = re.compile(r"""^(?:\.{0,2}/|["']{3}|["'].*["'][,)]?$|\S+\s\d+:\s|\+|<\w|[0-9a-f]{7,40}\s|\w+=|\S+\s:\s
                                  |[a-z][a-z0-9]*_\w*\s+["'{\[])""", re.X)
#: What no title ends with: a label's colon, a continued line's comma or open bracket, a docstring's quotes, a
#: whole line in brackets (``(227 more lines below)``); nor holds: a shell's ``&&``, ``||`` or ``2>&1``, a
#: banner's rule (``=== 1 failed in 0.06s ===``), a log level or a lower-case ``error:`` label, a quoted name's
#: label (``unable to access 'x': Could not resolve host``), a path (absolute, or to a file: ``tests/test_x.py``), a
#: code line's trailing comment, an assignment of a dotted name (``format_template = value.value``); a quoted root or
#: project path opening the line (cmd's ``'C:\Program' is not recognized as ...``) or ending it with its period
#: (Gradle's ``Execution failed for task ':test'.``), where a title quotes one among its words (``Route '/' returns
#: 404 when ...``, RGEN2).
#: A path to a file is looked for once per run of path characters, from the run's start, up to its first ``.ext``
#: and never back (``++``-style): tried from every ``x/`` of a run and backtracking over the rest, a line of a few
#: words and a 20,000-character run of ``a/b/c/...`` without an extension took 0.8-1.8 s holding the GIL (probe 52).
_NOT_TITLE = re.compile(r"""[,:(\[{\\]$|["']{3}$|^\(.*\)$|^\[.*\]$|\s(?:&&|\|\|)\s|\d>&\d|={3}|-{3}
                         |\b(?:ERROR|FAILED|FAIL|PASSED)\b|\b(?:error|warning|fatal):|["']:\s|(?:^|[\s"'(])/[\w.-]+/|(?<![\w/.-])(?:(?!\w/)[\w/.-])*+\w/(?:[\w/-]|\.(?![a-z]{1,4}\b))*+\.[a-z]{1,4}\b|\S\s{2,}\#\s|\s=\s[A-Za-z_]\w*\.\w
                         |\bexit(?:ed\swith(?:\snon-zero)?)?\s(?:code|status)\s-?\d|\b(?:HTTP|status\scode)\s\d{3}\b|\b\d+%?\s(?:tests?\s)?(?:failed|passed|errors?|skipped)\b
                         |\b(?:Error|Warning)\sat\b|\[(?:WARNING|ERROR|INFO|DEBUG|WARN|FATAL|CRITICAL|[A-Z]+_[A-Z_]+|E[A-Z]{4,})\]
                         |most\srecent\scall\slast|\{\s*"\w+"\s*:|\w\.\w+\([^)\s]|\btimed\sout\safter\s\d|\S:\s+\S+$
                         |\S:\s.*\S:\s|["']\s+(?:not\sfound|does\snot\sexist)|\bnot\sfound\b|={2}\d|\d\.\d+:\d{2,5}\b
                         |^['"](?:[A-Za-z]:\\|\\\\|/|:)[^'"\s]*['"]\s
                         |['"](?:[A-Za-z]:\\|\\\\|/|:)[^'"\s]*['"]\.$""", re.X)
#: Verbs a title says what is wrong with (``Getting http://.example.com raises UnicodeError``): a title may hold
#: no function word, and a log line seldom holds one of these beside code.
_TITLE_VERBS = frozenset("""raises raise returns fails crashes breaks ignores gives throws causes produces generates
shows works handles supports allows accepts loses drops converts casts renders prints hangs misses lacks leaks
overrides overwrites""".split())
#: A title is at most this many words (an issue's first line: up to 17 for 0.99 of 1,340 SWE-bench issues).
_TITLE_WORDS = 20
#: ``topic: what is wrong``, as many projects title their issues (``autodoc: empty __all__ attribute is ignored``,
#: ``[Bug]: ...``, ``KBinsDiscretizer: ...``). A log line's label is a level (``Error:``, ``FAILURE:``), an
#: exception, a path or a line (``x.py:12:``), and a program's message mostly holds a label of its own
#: (``rm: cannot remove 'x': No such file or directory``, ``grep: tests: Is a directory``).
_TOPIC = re.compile(r"^([^\s:]+):\s+([^:]+)$")
#: A program's own label (``make: *** No rule ...``, ``gmake[1]: ...``, ``tar: Exiting ...``, ``error[E0425]: ...``, apt's
#: ``W: ...``): a message, however title-like its words (probe 51, RAR: such lines of failed steps went to dense).
_PROGRAM_LABEL = re.compile(r"""^(?:[A-Za-z]|\w+\[\w+\]|make|gmake|cmake|tar|xargs|cargo|rustc|go|npm|yarn|pip\d?|git|bash|sh|zsh
                               |python\d?|node|docker|kubectl|curl|wget|cp|mv|rm|ls|cat|grep|sed|awk|find|chmod|mkdir|sudo
                               |apt(?:-get)?|dpkg|ld|gcc|g\+\+|clang|javac|java|mvn|gradle|ssh|patch|unzip|tsc|ruff|mypy
                               |[A-Z]+(?:_[A-Z]+)+|denied|refused|forbidden|unauthorized|invalid|timeout)$""", re.X)
_NOT_TOPIC = re.compile(r"""(?i)^(?:error|warning|warn|fatal|note|hint|info|debug|exception|traceback|output|results?
                            |fail\w*|passed|ok|e|\d+)$|(?:error|warning|exception)$|[/\\\#]|\.\w+$|\d$""", re.X)


def _title(line: str) -> bool:
    """One short line that reads as an issue's or a task's title: four to twenty words, half of them plain
    words, a function word or a verb of what is wrong among them, and none of a log line's, a code line's or a
    tool call's shapes (``Cannot override get_FOO_display() in Django 2.2+.``, ``is_upper() raises IndexError for
    tall matrices``): a title names the code it is about, as a question does, and is searched by what it means.
    Probe 51, AR: the first lines of 1,300 SWE-bench issues went to hybrid for half of them (0.52 right), where
    dense found a relevant run of another task more often (gemini-3-pro's 116 such tasks, k=5: 0.69 against 0.55)."""
    words = line.split()
    if (not 4 <= len(words) <= _TITLE_WORDS or _NOT_TITLE_START.match(line) or _NOT_TITLE.search(line)
            or _counted(words)):
        return False
    plain = sum(_PLAIN_WORD.match(w) is not None for w in words)
    return plain >= 0.5 * len(words) and (_function_share(words) > 0
                                          or any(w.lower().strip(".,;!?") in _TITLE_VERBS for w in words))


#: A title names a version or an issue's number, seldom more: a line with at least this many numbers, a third of its
#: words, is a program's count (patch's ``Hunk #1 succeeded at 485 (offset -1 lines).``, ``Hunk #5 succeeded at 7079
#: with fuzz 2 (offset 42 lines).``; round 23, GEN4: they read as titles, dense).
_COUNTED_NUMBERS = 3
#: A number a program counts with: bare digits, signed, numbered or in brackets (``#1``, ``-2``, ``(15``, ``42)``).
#: A version, an id or a name holding digits is a title's word (``2.17.1``, ``CVE-2021-44832``, ``Log4j``, ``32-bit``:
#: round 23's fix, FRGEN4: ``Update Log4j to 2.17.1 to address CVE-2021-44832`` went to hybrid by them).
_COUNT = re.compile(r"^[#(\[]?[-+]?\d+[)\].,:;]*$")


def _counted(words: list[str]) -> bool:
    """A line a third of whose words, and :data:`_COUNTED_NUMBERS` or more, are numbers (:data:`_COUNT`): a program's
    report."""
    numbers = sum(_COUNT.match(w) is not None for w in words)
    return numbers >= _COUNTED_NUMBERS and 3 * numbers >= len(words)


def _level_label(label: str) -> bool:
    """A label in capitals of any alphabet, four letters or more: a program's level (psql prints its levels so in
    every language: ``FEHLER:  Relation »x« existiert nicht``, ``ОШИБКА:  отношение ... не существует``,
    ``ERREUR:  la relation « x » n'existe pas``, ``DETAIL:``, ``ПОДСКАЗКА:``), where :data:`_NOT_TOPIC` knows
    English's only (probe 53, RGEN: such lines read as titles, dense). A title's topic is a name (``autodoc``,
    ``KBinsDiscretizer``, ``[Bug]``). A label of ASCII capitals needs psql's two blanks after it: a prompt's
    ``CRITICAL: Tests MUST fail ...`` or ``IMPORTANT: ...`` is emphasis, and stays a title."""
    name, _, rest = label.partition(":")
    return (len(name) >= 4 and name.isalpha() and name.isupper()
            and (not name.isascii() or rest.startswith("  ")))


def _topic_title(line: str) -> bool:
    """A title under its topic's label (see :data:`_TOPIC`), the label no log's and the line a title."""
    topic = _TOPIC.match(line)
    return (topic is not None and not _NOT_TOPIC.search(topic.group(1))
            and not _level_label(line.lstrip()) and not _PROGRAM_LABEL.match(topic.group(1))
            and not _EXCEPTION_LABEL.search(line)
            and not _EXCEPTION_CALL.search(line) and _title(topic.group(2)) and _title(line))


#: A commit's or a pull request's title in the Conventional Commits form (``fix(ci): better fix for the windows-only
#: test flake``, ``refactor(core): added config module``, ``chore: dependency bumps``) or under its ticket's key
#: (``EVG-14427: fix flaky windows test``): a type (with a scope in brackets: any of the spec's types; bare: those no
#: program is named, so ``test: missing argument`` and a Makefile's ``build: deps`` stay a log's), then its subject.
_COMMIT_TITLE = re.compile(r"""^(?:(?:feat|fix|docs|style|refactor|perf|test|build|ci|chore|revert|bug)\([^()]{1,40}\)
                               |feat|fix|docs|style|refactor|perf|chore|revert|(?P<ticket>[A-Z][A-Z0-9]+-[1-9]\d*))!?:\s+(\S.*)$""", re.X)
#: What follows a program's code where a ticket's key would stand: its message, opening on a word of what is wrong or
#: a label of its own (``ORA-12154: TNS:could not resolve ...``, ``UTF-8: invalid byte sequence in input``); a code
#: zero-padded (``ORA-00942``, ``RMAN-06054``, ``SP2-0734``) is no ticket's key at all (round 22, review of GEN3).
_CODE_MESSAGE = re.compile(r"^(?:\w+:\w|(?:invalid|unknown|cannot|could|no|not|unable|failed|bad|illegal|unexpected)\b)",
                           re.I)


def _commit_title(line: str) -> bool:
    """A commit's or pull request's title (:data:`_COMMIT_TITLE`) whose subject is words: two or more, half of them
    plain, none of a log line's shapes. Its subject is an imperative in lower case, often with no function word
    (``handle trailing commas correctly``), so :func:`_topic_title` read it as no title, and the ``type:`` label as a
    log's (round 22, GEN3: 4 of 9 such real titles went to hybrid)."""
    commit = _COMMIT_TITLE.match(line)
    if commit is None or _NOT_TITLE.search(line) or _EXCEPTION_LABEL.search(line):
        return False
    if commit.group("ticket") and _CODE_MESSAGE.match(commit.group(2)):
        return False
    words = commit.group(2).split()
    return len(words) >= 2 and sum(_PLAIN_WORD.match(w) is not None for w in words) >= 0.5 * len(words)


def looks_like_log(text: str, *, titles: bool = True) -> bool:
    """True for pasted log lines, stack traces, commands, paths and identifiers; False for prose:
    task descriptions and questions, even when they name identifiers, paths or errors.
    ``titles=False``: a one-line title naming code (``_title``, ``_topic_title``) is judged by its log signs,
    as before that rule: where a line that reads like a title may be a pasted error (``Permission denied while
    opening file config.yaml``), which a search for the runs that met it must look for word for word.

    - A *block* (several lines, or 25 words or more) is prose when lines of natural language
      hold a fifth of its words or more, the lines of a Python traceback or pytest failure
      report set aside (their source lines and messages often read as sentences): a pasted
      trace is a log, an issue quoting one is judged by its own words. A description in
      markdown (fenced code, headings) is judged by its words outside the fences. A single
      long line that starts as a log record, code or a tool call is a log.
    - A *short line* is a log when it starts like one (``label:``, ``Traceback``, ``File "``,
      a prompt, a diff marker, code, a shell command) or holds an exception label (or an
      exception built with its message, ``NameResolutionError("...``, as a long line may); prose when
      it reads as a sentence or question (one may open with the code it is about:
      ``model_to_dict() should return ...``); otherwise it is counted by its log signs (paths,
      snake_case, flags, numbers, brackets, dotted names): two, or one in a line of up to
      eight words; up to three words are keywords (or a bit of output): hybrid too.

    Measured by ``scripts/eval_generalise.py`` on ../shared/data: every task text (SWE-bench
    issues, tau-bench instructions) and out-of-domain task routes to dense; 0.99-1.00 of
    traceback lines, tool errors, commands and tool calls, and about 0.9 of arbitrary lines
    of outputs (docstring sentences are the rest), route to hybrid. On 500 SWE-bench Verified
    runs (mini-swe-agent, gemini-3-pro): 491 of the 500 issues go to dense (487 before traces
    were set aside), and 70 of 70 whole tracebacks and pytest reports pasted from their
    outputs and from SWE-agent runs go to hybrid (42 before).
    """
    t = text.strip()
    if not t:
        return False
    lines = [line for line in t.splitlines() if line.strip()]
    if len(lines) > 1 or _word_count(t) >= _BLOCK_WORDS:
        body = _FENCE.sub(" ", text)  # unstripped: pytest's listed source is told by its indentation
        if body != text or len(_MARKDOWN.findall(t)) >= 2:  # markdown: a written description quoting code or logs
            return not (_word_count(body) >= 5 and _prose_share(body) >= _PROSE_SHARE)
        if len(lines) == 1 and (_TOOL_CALL.match(t) or _CODE_START.match(t) or _EXCEPTION_LABEL.match(t)
                                or _EXCEPTION_CALL.search(t) or _LEVEL_START.match(t) or _program_message(t)):
            return True
        return _prose_share(text) < _PROSE_SHARE
    if _QUESTION.match(t) and t.endswith("?") and len(t.split()) >= 4:
        return False  # a question, whatever it names
    if (_CODE_START.match(t) or _EXCEPTION_LABEL.search(t) or _EXCEPTION_CALL.search(t) or _TOOL_CALL.match(t)
            or _ruby_exception(t) or _program_message(t)):
        return True
    if titles and (_topic_title(t) or _commit_title(t)):  # before _LOG_START, whose ``label:`` it is a kind of
        return False
    if _LOG_START.match(t):
        return True
    if _sentence(t) or _cjk_prose(t) or _imperative(t) or (titles and _title(t)):
        return False
    signs = len(_LOG_SIGNS.findall(t)) + len(_DOTTED.findall(t))
    words = t.split()
    return (signs >= 2 or (signs >= 1 and len(words) <= 8) or len(words) <= _KEYWORDS
            or (len(words) <= 16 and _SHORT_LOG_SIGNS.search(t) is not None) or _not_words(t, words))


_LEAD_IN_WORDS = 4  # a program's lead-in of plain words is short and has no function word (:func:`_lead_in`)


def _not_words(line: str, words: list[str]) -> bool:
    """A line that is no sentence, title or ask and leads in to lines that follow it (:func:`_lead_in`) or is mostly
    not words (its ``.hh .h++ .hm .hpp ...``): a program's output, whatever its log signs (round 22, GEN3). A label
    ending on one word is no sign (a title's ``CI pipeline status: failed``)."""
    return _lead_in(line, words) or sum(_PLAIN_WORD.match(w) is not None for w in words) < 0.5 * len(words)


def _lead_in(line: str, words: list[str]) -> bool:
    """A line ending in ``:`` that is a program's: one that is no capitalised run of plain words (a wrapped help
    text's ``value provided as a URI rather than included inline (default:``, ``PersonName attributes not in
    str:``), or a few words, none a function word (CMake's ``Cannot find source file:``). A sentence's lead-in is
    a writer's (``Consider the following model:``, ``Here is the error I get:``, ``Wie behebe ich den Fehler:``;
    round 22, review of GEN3)."""
    if not line.endswith(":"):
        return False
    sentence = line[:1].isupper() and all(_PLAIN_WORD.match(w) is not None for w in words)
    return not sentence or (len(words) <= _LEAD_IN_WORDS and _function_share(words) == 0)


def resolve_mode(mode: str, text: str) -> str:
    """``auto`` becomes ``hybrid`` for log-like queries and ``dense`` for prose."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}: expected one of {list(MODES)}")
    if mode != "auto":
        return mode
    return "hybrid" if looks_like_log(text) else "dense"


def rrf(rankings: Sequence[Sequence[str]], weights: Sequence[float] | None = None, k: int = RRF_K,
        depth: int | None = None) -> dict[str, float]:
    """Weighted reciprocal rank fusion: ``sum_i w_i / (k + rank_i)``.

    Args:
        rankings: one list of ids per leg, best first.
        weights: one weight per leg (default: equal).
        k: the RRF constant.
        depth: where each leg's ranks are fixed (None: everywhere). A row some leg ranks within ``depth``
            scores by its ranks within it alone; a row no leg ranks within it scores below every such row, in
            the order of its full RRF. So legs asked deeper (to find more runs) add rows below and never reorder
            the rows within ``depth``: whatever ``k`` a search asks for, its top is the same (round 22, PAGE).
    Returns:
        id -> fused score (higher is better).
    """
    weights = weights or [1.0] * len(rankings)
    fused: dict[str, float] = {}
    for ranking, weight in zip(rankings, weights):
        for rank, rid in enumerate(ranking[:depth], 1):
            fused[rid] = fused.get(rid, 0.0) + weight / (k + rank)
    if depth is None or all(len(ranking) <= depth for ranking in rankings):
        return fused
    # a deeper row scores at most sum(w) / (k + depth + 1), a row within depth at least min(w) / (k + depth):
    # scaled by half their ratio, every deeper row stays below
    scale = min(w for w in weights if w > 0) / (k + depth) / (sum(weights) / (k + depth + 1)) / 2
    deeper = rrf(rankings, weights, k)
    fused.update((rid, score * scale) for rid, score in deeper.items() if rid not in fused)
    return fused


def weighted(scores: Sequence[dict[str, float]], weights: Sequence[float]) -> dict[str, float]:
    """Convex blend of min-max normalised scores, one dict (id -> score) per leg.

    Args:
        scores: raw scores per leg (cosine for dense, BM25 for lexical).
        weights: one weight per leg.
    Returns:
        id -> fused score in [0, sum(weights)].
    """
    fused: dict[str, float] = {}
    for leg, weight in zip(scores, weights):
        if not leg:
            continue
        low, high = min(leg.values()), max(leg.values())
        span = (high - low) or 1.0
        for rid, score in leg.items():
            fused[rid] = fused.get(rid, 0.0) + weight * (score - low) / span
    return fused


#: Up to this many words a query is looked for verbatim with a regex; beyond, in each row's
#: whitespace-normalised text (the same rows). The regex, tried from each place of a row, walks
#: as many of the query's words as the row repeats there: a 10,000-word query against a 64 KB
#: row of the same words took 11 s (probe I, I1).
VERBATIM_REGEX_WORDS = 32

#: Words of a query for the near-verbatim lift: runs of word characters, so punctuation and quoting
#: (``python,`` / ``python``, ``'dbt'`` / ``"dbt"``) do not tell a row apart.
_WORD = re.compile(r"\w+")

#: Numbers standing alone (decimal, or a 0x address): what differs between two runs meeting the same error
#: (sizes, counts, line numbers, ports, pids, addresses). Where no row nearly holds a pasted line with its own
#: numbers, any number stands for any other: "Expected axis has 3 elements, new values have 0 elements" nearly
#: holds "... has 4 elements, new values have 96 elements", two of 13 words off otherwise (probe E3, A2). Only
#: then: where a row holds the line's own numbers nearly, rows with other numbers are other commands and lines
#: (``sed -n 100,120p`` is not ``sed -n 200,220p``: with numbers always alike, eval_exact's "number changed" lines
#: fell from 0.82 to 0.77 row hit@1 overall, commands from 0.77 to 0.55). Not inside a word (``py311``). A failure
#: warning tests one step line at a time (:meth:`FusionConfig.nearly_holds`): there, either holds.
_NUMBER = re.compile(r"\b(?:0[xX][0-9a-fA-F]+|\d+)\b")
_ANY_NUMBER = "0"


def _numbers_alike(text: str) -> list[str]:
    """``text``'s words with each number :data:`_ANY_NUMBER`."""
    return _WORD.findall(_NUMBER.sub(_ANY_NUMBER, text))


def near_span(text: str) -> int:
    """The span of a row :func:`near_verbatim_share` looks within for ``text``: as many lines as it has with a word,
    and one more, since a row often breaks in two what a paste joins in one (Gradle's ``Execution failed for task
    ':app:test'.`` / ``> There were failing tests. See the report at: ...``, pasted as one line, was no longer
    nearly held: review RALL-B); words lines apart still count nothing."""
    return max(1, sum(_WORD.search(line) is not None for line in text.splitlines())) + 1


def near_verbatim_share(words: Sequence[str], row: str, numbers_alike: bool = False, lines: int = 1) -> float:
    """The share of ``words`` (a query's, in order) that stand next to their neighbour in the query in one span of
    ``lines`` consecutive lines of ``row`` (:func:`near_span`) too: a word counts when one of
    the word pairs it is part of is a pair of adjacent words of that span (with ``numbers_alike``, ``words`` as
    :func:`_numbers_alike` gives them, and any number of the row the same as any other); the best span counts. One
    word changed or appended costs one word (its pairs); words scattered over the row, or in another order, count
    nothing: a pytest output whose ``tests/x.py::test_a PASSED`` line and another test's ``FAILED tests/x.py::test_b -
    AssertionError: assert 'alice' == 'bob'`` held every pair of a pasted ``FAILED tests/x.py::test_a - AssertionError:
    assert 'alice' == 'bob'`` between them, over the row, and ranked above the run where test_a failed with one word
    changed (round 21, RGEN2)."""
    if len(words) < 2:
        return 0.0
    at: dict[tuple[str, str], list[int]] = {}  # each pair of the query -> where it stands in the query
    for j, pair in enumerate(zip(words, words[1:])):
        at.setdefault(pair, []).append(j)
    split = _numbers_alike if numbers_alike else _WORD.findall
    row_lines = [line_words for line_words in map(split, row.splitlines()) if line_words]
    inner = [{j for pair in zip(w, w[1:]) for j in at.get(pair, ())} for w in row_lines]  # pairs within a line
    joins = [set(at.get((w[-1], v[0]), ())) for w, v in zip(row_lines, row_lines[1:])]  # pairs across a line's end
    best = 0
    for start, held in enumerate(inner):  # a best span starts at a line holding a pair (or one shorter than lines)
        if not held and not (start < len(joins) and joins[start]):
            continue
        span = set().union(*inner[start:start + lines], *joins[start:start + lines - 1])
        best = max(best, sum(j - 1 in span or j in span for j in range(len(words))))
    return best / len(words)


@dataclass(frozen=True)
class FusionConfig:
    """How hybrid search fuses its legs: RRF weights (dense, lexical) per kind of query.

    Pasted log lines, commands and paths lean on the lexical leg: equal-weight RRF
    dilutes exact matches (FACTS.md: below plain BM25 on two of three query classes).
    """

    prose_weights: tuple[float, float] = (1.0, 1.0)
    log_weights: tuple[float, float] = (1.0, 3.0)
    #: Candidates asked of each leg at least, and the depth their ranks are fused at whatever ``k`` (``rrf``'s
    #: ``depth``): the rows either leg ranks within it keep one order however deep the legs are asked, so a
    #: search's top is the same whether it asks for 5 or 50. (A depth of 250, to fuse deeper ranks at k=50 too,
    #: took hybrid from 0.92x / 1.10x dense to 1.33x / 1.45x on bench_hybrid's 20k store: the dense leg returning
    #: 250 rows; round 22, PAGE.)
    pool: int = 50
    #: Rows holding the whole query verbatim (whitespace-normalised, at least
    #: ``verbatim_min_chars`` long) rank above all others: a pasted error line or
    #: command wants the run where exactly that happened. On ../shared/data this took
    #: hybrid hit@1 on exact lines from 0.57-0.65 to 1.00 (scripts/eval_exact.py).
    verbatim_first: bool = True
    verbatim_min_chars: int = 8
    #: The lexical leg's best rows are checked for the query verbatim too, wherever fusion put
    #: them: a passage (the clipped part of a long output) has no vector of its own, so a row
    #: both legs found outranks it in RRF even when only the passage holds the pasted line.
    lexical_checked: int = 10
    #: Rows holding nearly all of the query in order (``near_verbatim_share`` at least this, a query
    #: of ``near_min_words`` words or more) rank above all but verbatim rows: a pasted error rarely
    #: matches byte for byte (another version's message, path, line number or address), and RRF
    #: kept a passage nearly holding it (lexical leg only, 25x the next BM25) 3rd (probe E, E3).
    #: Only the lexical leg's best rows (``lexical_checked``) are looked at: a row holding most of
    #: the query's words in order is among them, and the cost stays a few rows whatever ``k``.
    #: Log-like queries only: prose shares whole templated sentences with other runs' text (tau-bench
    #: instructions differ by names and ids), where "nearly the same words" is no sign of the same
    #: event (in hybrid, 2 of 5 changed task-text queries lost a run of the same task).
    #: Up to ``near_max_words``: each word is looked for in each checked row, so a pasted block of
    #: thousands of words would cost seconds (as the verbatim regex did, probe I, I1); an error line or a
    #: short trace is far below it, and a long block's rows are found by the legs and the verbatim lift.
    near_share: float = 0.8
    near_min_words: int = 6
    near_max_words: int = 200

    def weights(self, text: str) -> tuple[float, float]:
        """The legs' weights in a hybrid search of ``text``: a line is weighed as a log without the title rule
        (which only chooses ``auto``'s mode), a pasted error that reads like a title being searched word for word."""
        return self.log_weights if looks_like_log(text, titles=False) else self.prose_weights

    def pool_size(self, k: int, group_size: int) -> int:
        """Candidates asked of each leg first: enough for k runs of group_size rows after fusion. Only the first
        ``pool`` ranks of each leg are fused as ranks (``fuse``'s ``depth``): a row's fused score depended on how
        deep the legs were asked, so asking for 20 runs reordered ranks 3-5 of asking for 5 in 8 of 34 engineers'
        queries (round 22, ENG); deeper rows only fill the places below."""
        return max(self.pool, k * max(group_size, 1) * 5)

    def fuse(self, text: str, dense: Sequence[str], lexical: Sequence[tuple[str, float]], mode: str,
             depth: int | None = None) -> dict[str, float]:
        """id -> fused score: BM25 alone in lexical mode, else weighted RRF of the two rankings, their ranks
        fixed at ``depth`` (see :func:`rrf`: ``pool``, so deeper pools never reorder the rows within it)."""
        if mode == "lexical":
            return dict(lexical)
        return rrf([list(dense), [rid for rid, _ in lexical]], weights=self.weights(text), depth=depth)

    def shortlist_size(self, k: int, group_size: int, mode: str) -> int:
        """How many of the best fused candidates are fetched by key up front and checked for the
        query verbatim (grouping walks further, reading only the runs of candidates, when these
        hold fewer than ``k`` runs or a run's ``group_size`` rows).

        Never fewer than ``pool``, the depth fused ranks are fixed at: a row holding the query verbatim below the
        shortlist was lifted only when ``k`` made the shortlist reach it, so asking for more reordered the top
        (gemini-3-pro's 231 django runs, a traceback pasted with its last line cut: ``django__django-15525``, which
        printed it, second at k=20 and absent at k=5; round 24, ENG2). So the shortlist is ``pool`` rows until
        ``k * group_size`` passes ``pool / 2`` in hybrid (``pool / 4`` otherwise), and that floor is what a small
        ``k`` costs: at k=5 on that tenant (231 runs, load 12) the median of ten queries' p50 went 17-22 -> 23-24 ms
        and the slowest query 18-26 -> 36-52 ms (review of ENG2, 4).

        Past the floor, two per place for hybrid with one row per run, where the lexical leg's best rows are checked
        anyway (``lexical_checked``) and fetching is most of what hybrid adds to dense; measured before the floor
        (so true today for ``k`` of 25 and more): on ../shared/data every hybrid figure of eval_exact, eval_runtime
        and eval_generalise was the same with two as with four (log lines in a 7k-row tenant: 54 -> 41 ms, dense
        31-37 ms). Four otherwise: in lexical mode the candidates are the BM25 ranking alone, where a long row
        holding the pasted line can sit deep (two cost lexical mode 2 of 300 lines), and fuller groups need more
        rows of each run."""
        return max(self.pool, k * max(group_size, 1) * (2 if mode == "hybrid" and group_size <= 1 else 4))

    def near_verbatim_lift(self, text: str, scores: dict[str, float], texts: dict[str, str]) -> dict[str, float]:
        """Rows of ``texts`` holding nearly all of a log-like query in order (see ``near_share``) above
        every other row, the closest wording first (:meth:`near_verbatim_rows`), then in the order of their scores.
        Applied before :meth:`verbatim_lift`, which puts rows holding the whole query above these."""
        return lifted(scores, self.near_verbatim_rows(text, texts))

    def near_verbatim_rows(self, text: str, texts: dict[str, str], held: Collection[str] = ()) -> dict[str, float]:
        """The ids of ``texts`` holding nearly all of a log-like query in order, each with how closely
        (:func:`near_verbatim_share`: 1.0 where every word stands by its neighbour): with its own numbers, or where no
        row does, with any (:data:`_NUMBER`). Rows in ``held`` (known to hold the whole query: :meth:`verbatim_rows`)
        are among them unchecked (1.0), which spares splitting the rows a pasted line most often comes from
        (bench_hybrid: 0.68 -> 0.28 ms a query).

        How closely ranks them (:func:`lifted`): another run of a test suite prints its summary with other counts,
        and with any number for any other, the passing run's ``test result: ok. 2 passed; 0 failed; ...`` nearly
        holds a pasted ``test result: FAILED. 4 passed; 2 failed; ...`` (all words but one) as the failed run's
        does (all): in the order of their fused scores the passing run came first (probe 53, GEN)."""
        words = _WORD.findall(text)
        if (not self.verbatim_first or not self.near_min_words <= len(words) <= self.near_max_words
                or not looks_like_log(text, titles=False)):
            return {}
        lines = near_span(text)
        near = {rid: share for rid, row in texts.items()
                if (share := 1.0 if rid in held else self._closeness(words, row, lines))}
        if near or not _NUMBER.search(text):
            return near
        alike = _numbers_alike(text)  # no row holds the line's own numbers nearly: any number for any other
        return {rid: share for rid, row in texts.items()
                if (share := self._closeness(alike, row, lines, numbers_alike=True))}

    def nearly_holds(self, text: str, row: str) -> bool:
        """Whether ``row`` holds nearly all of ``text``'s words in order (``near_share``; a text of
        ``near_min_words`` to ``near_max_words`` words), its own numbers or any (see :data:`_NUMBER`), whatever
        the text looks like: the test of :meth:`near_verbatim_rows` for one row (failure warnings ask it of step
        lines)."""
        words = _WORD.findall(text)
        if not self.near_min_words <= len(words) <= self.near_max_words:
            return False
        lines = near_span(text)
        return bool(self._closeness(words, row, lines) or (
            _NUMBER.search(text) is not None and self._closeness(_numbers_alike(text), row, lines, numbers_alike=True)))

    def _closeness(self, words: list[str], row: str, lines: int, numbers_alike: bool = False) -> float:
        """How closely ``row`` holds ``words`` in order within ``lines`` consecutive lines (:func:`near_verbatim_share`)
        where it holds nearly all of them (``near_share``), else 0.0; first, cheaply, are enough of them in it at all
        (substring tests: most rows fail here, before their words are split and paired)."""
        needed, present = self.near_share * len(words), 0
        numbers = numbers_alike and _NUMBER.search(row) is not None
        for seen, word in enumerate(words, 1):  # stops once the words not yet looked for cannot make up the share
            present += numbers if numbers_alike and word == _ANY_NUMBER else word in row
            if present + len(words) - seen < needed:
                return 0.0
        share = near_verbatim_share(words, row, numbers_alike, lines)
        return share if share >= self.near_share else 0.0

    def verbatim_lift(self, text: str, scores: dict[str, float], texts: dict[str, str]) -> dict[str, float]:
        """Rows whose text holds the whole query (whitespace-normalised) above every other row, those holding it as
        pasted first (:meth:`as_pasted_first`)."""
        return lifted(scores, self.as_pasted_first(text, texts, self.verbatim_rows(text, texts)))

    @staticmethod
    def as_pasted_first(text: str, texts: dict[str, str], held: Collection[str]) -> dict[str, float]:
        """The rows of ``held`` (holding the query whitespace-normalised), each with how closely: 2 where its text
        holds the query as pasted, its blanks too, else 1 (:func:`lifted` puts the closer first). A line's blanks
        can be what tells it: a diff's ``+                    if tmp_name and os.path.exists(tmp_name):`` is one
        line of one hunk, the same words at another indent another hunk's, and a docstring's line another
        version wraps elsewhere is another file (round 23, GEN4: such rows came first in 2 of the 7 exact lines of
        outputs ``scripts/eval_generalise.py`` missed). Blanks count only where the paste is laid out
        (:data:`_LAID_OUT`): a line typed, or copied from a page that collapses blanks, has one blank between words,
        and a row holding it so is no closer than ``pip list``'s ``numpy      1.26.4`` (round 23's fix, FRGEN4: it
        came first); such a line is one line still, held as pasted within one line of a row. A paste starting with
        its indent holds it as a line's whole indent (:data:`_LINE_START`): a 4-blank paste is not held in the same
        words at 8 (FRALLB: both had counted as pasted)."""
        pasted = _as_pasted(text)
        if _LAID_OUT.search(pasted):
            if pasted[0] in " \t":  # its indent is a whole line's (FRALLB: a 4-blank paste was held in an 8-blank row)
                line = re.compile(_LINE_START + re.escape(pasted), re.MULTILINE)
                return {rid: 2.0 if line.search(_as_pasted(texts[rid])) else 1.0 for rid in held}
            return {rid: 2.0 if pasted in _as_pasted(texts[rid]) else 1.0 for rid in held}
        pasted = pasted.lstrip()  # one blank between words: a row holding it as it stands holds it collapsed too
        return {rid: 2.0 if pasted in texts[rid] or pasted in _BLANKS.sub(" ", texts[rid]) else 1.0 for rid in held}

    def verbatim_rows(self, text: str, texts: dict[str, str]) -> set[str]:
        """The ids of ``texts`` whose text holds the whole query (whitespace-normalised).

        A pasted pytest report (:data:`PYTEST_MARK`) is held with or without pytest's marks, ``E`` and ``>``: the
        run whose own script printed ``ModuleNotFoundError: No module named 'sqlfluff'`` holds what a report's
        ``E   ModuleNotFoundError: ...`` says, and only runs that met it under pytest had held the paste (round 25,
        ENG3, on the shared mini-swe-agent runs: 2 of 8 runs printing that line)."""
        marked = bool(PYTEST_MARK.search(text))
        needle = _words(text, marked)
        if not self.verbatim_first or len(needle) < self.verbatim_min_chars:
            return set()
        words = needle.split(" ")
        if len(words) > VERBATIM_REGEX_WORDS:  # linear: the normalised row, searched for the needle
            return {rid for rid, row in texts.items() if needle in _words(row, marked)}
        # the query's words with any whitespace between them (and pytest's marks, for a report): a row's text holds
        # this where its whitespace-normalised text holds the needle (14x cheaper than normalising each long row)
        pattern = re.compile((r"(?:\s+[>E](?=\s))*\s+" if marked else r"\s+").join(map(re.escape, words)))
        return {rid for rid, row in texts.items() if pattern.search(row)}


def _words(text: str, unmarked: bool) -> str:
    """``text``'s words one blank apart, without pytest's marks when ``unmarked`` (a pasted report's lines)."""
    return " ".join(word for word in text.split() if not (unmarked and word in _MARK_WORDS))


#: A line of a pytest report behind its mark: the failing source line (``>``), an error line (``E``), as pytest pads them.
PYTEST_MARK = re.compile(r"^[>E](?: {3,}|\t)", re.MULTILINE)
#: pytest's marks as words of a whitespace-split text.
_MARK_WORDS = frozenset({"E", ">"})
#: Whitespace that is a paste's layout, not a typist's gap between words: a run of blanks (an indent, aligned columns),
#: a tab, a line break (FusionConfig.as_pasted_first).
_LAID_OUT = re.compile(r" {2,}|[\t\n]")
#: Where a paste starting with its indent starts in a row: at a line's start, after the label a step's field starts
#: with if any (:func:`~trajsearch.represent.step_text`: ``[step 3] result: `` before an output's first line), then a
#: diff's mark if any (``+``, ``-``, or the blank of a context line), so that its indent is all of the line's and not
#: the tail of a deeper one's.
_LINE_START = r"^(?:\[step \d+\] )?(?:(?:thought|result|error): )?[-+ ]?"
#: Blanks within a line, as a paste that is not laid out is compared with a row.
_BLANKS = re.compile(r"[ \t]+")
#: Blank lines before a paste's first line: its indent starts after them.
_BLANK_LINES = re.compile(r"^(?:[ \t]*\n)+")


def _as_pasted(text: str) -> str:
    """``text`` as its blanks are compared (:meth:`FusionConfig.as_pasted_first`): its lines ending in ``\n`` (a paste
    from Windows ends them in ``\r\n``; round 23's fix, FRGEN4: no row held such a paste), from its first line's
    indent to its last word."""
    return _BLANK_LINES.sub("", text.replace("\r\n", "\n")).rstrip()


def lifted(scores: dict[str, float], ids: Collection[str] | Mapping[str, float]) -> dict[str, float]:
    """``scores`` with the rows of ``ids`` raised above every other row, in their order; where ``ids`` maps each row
    to how closely it holds the query, the closest first, then in their order. Each step of closeness adds the best
    score once more (scores are not negative), so no score difference reorders two steps."""
    lift = max(scores.values(), default=0.0)
    closeness = ids if isinstance(ids, Mapping) else dict.fromkeys(ids, 1.0)
    step = {value: n for n, value in enumerate(sorted(set(closeness.values())), 1)}
    return {rid: score + (lift * step[closeness[rid]] if rid in closeness else 0.0) for rid, score in scores.items()}

"""``gptme``: conversations of gptme (gptme/gptme), the terminal agent, as its log file keeps them.

Source read: gptme/gptme at d27f98d (2026-08) and gptme 0.35.1 (PyPI): ``gptme/message.py`` (``Message.to_dict``: a
line's keys), ``gptme/logmanager`` (the file and its folder), ``gptme/tools/base.py``
(``ToolUse.iter_from_content``: what in a message is a call), ``gptme/codeblock.py`` (``_extract_codeblocks``: its
code blocks), ``gptme/tools/__init__.py`` (``execute_msg``: which calls get a result), ``gptme/tools/shell.py``
(``_format_shell_output``: a command's result), ``gptme/tools/python.py`` (an ``ipython`` block's result) and
``gptme/prompts`` (the system prompt, ``pinned`` and ``hide``). No real log was found committed on GitHub (see
``tests/fixtures/gptme/.newa31/README.md``): the fixtures are written by gptme 0.35.1's own code (its
``LogManager``, its parser and tools executing the calls).

gptme keeps a conversation as JSON lines (rewritten whole on each message): ``~/.local/share/gptme/logs/<conversation
id>/conversation.jsonl`` (a branch ``branches/<name>.jsonl`` beside it; ``side_path`` passes over the rest). Each line
is a message: ``role`` (``system``, ``user``, ``assistant``), ``content`` (text), ``timestamp`` (ISO), and where set
``pinned``, ``hide``, ``files``, ``file_hashes``, ``call_id``, ``ephemeral_ttl``, ``metadata`` (``model``, ``usage``).
The file opens with the system prompt, ``pinned`` (and ``hide``; before 0.18, 2024-09, no ``pinned``: ``role``,
``content``, ``timestamp``, ``files``). A tool call is written in the assistant's text: a Markdown code block whose
language is the tool's block type (```` ```shell ````, ```` ```ipython ````, ```` ```save path ````; fences of 3 or more
backticks, nested fences inside, blocks in a ``<think>`` section no calls), in gptme's ``tool`` format ``@<tool>(<call
id>): {json}`` (several a message, the JSON to its balanced brace, a Python dict from Anthropic's non-streaming path;
not inside a code block), or in its ``xml`` format ``<tool-use><tool>..</tool></tool-use>`` (then markdown blocks are no
calls); its result is the ``system`` message(s) after it (the ``tool`` format's carry its ``call_id``): a command's
``Ran command: `...``` with its stdout and stderr blocks and ``Return code: N`` when not 0, Python's ``Executed code
block.`` with an ``Exception during execution ...`` line when it raised (a sandbox's ``Process exited with code N``), a
tool's ``Error executing tool '...': ...``, gptme's own ``Tool '...' is not available for execution.``, ``... was not
executed (interrupted).``, ``Interrupted by user``.

Mapping: a file is one run; task = the first user message (later ones ``metadata.user_prompts``); steps = the tool calls
with their results (thought: the assistant's text before the call; a ``python`` block, a call until 2024-09, only where
a system message answers it), a reply with no call a ``respond`` step; a failed call's error: a command's output's
decisive line and exit code (``exit_code_error``), a raised exception's line, a tool's error message; a call the file
ends without an answer to failed (one the conversation went on past unanswered is a block gptme did not run: no error);
user messages gptme writes itself in autonomous mode (``<system>...</system>``) are no prompts
(``metadata.auto_replies`` counts them); model: the assistant messages' ``metadata.model`` where recorded (gptme since
2025-12), else none; outcome unknown (a conversation records no verdict); times are ``datetime.now()``, local with no
zone, read on ``_common.local_clock`` (gptme rewrites the file on each message, so its last time against the mtime may
tell the zone; else ``TRAJSEARCH_LOCAL_TZ``; ``metadata.created_at_zone`` says which). The file holds no id: the run's
is gptme's conversation id, the name of its folder, ``gptme.<conversation id>`` (a branch's ``gptme.<conversation
id>.<branch>``), so a copy keeping its folder is the same run; a file otherwise named is named by its place
(``file_run_key``): what was said cannot be the id (two conversations asked alike open alike).
"""

from __future__ import annotations

import ast
import bisect
import re
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

from trajsearch.model import Trajectory

from ._agent_cli import (API_ERROR_CAUSE, NEVER_ANSWERED, SessionSteps, as_records, as_str, command_line,
                         exit_code_error, iso_time, prompt_list, session_trajectory, wall_time, whole_file)
from ._common import (TIME_ZONE, Context, LocalClock, RecordError, as_dict, file_run_key, item_positions, json_kind,
                      loads, local_clock, named_path, short)

NAME = "gptme"
WHOLE_FILE = True
#: Where gptme keeps its conversations (``dirs.get_logs_dir``): a walk of a home reads them.
SESSION_FOLDERS = (".local/share/gptme/logs",)
#: gptme's files beside a conversation's log that hold no run, and what each is: its event log (the same messages as
#: events), the model selection record ``LogManager.write_model_trace`` writes on each write (since 0.32.2), its
#: settings (``ChatConfig``).
_NO_RUN_FILES = {"events.jsonl": "event log of a conversation (its messages as events)",
                 "model_selection_trace.json": "model selection record of a conversation",
                 "config.toml": "settings of a conversation"}
#: The keys ``Message.to_dict`` writes: a line with another is not gptme's.
_KEYS = frozenset({"role", "content", "timestamp", "files", "file_hashes", "pinned", "hide", "ephemeral_ttl",
                   "call_id", "metadata"})
_ROLES = ("system", "user", "assistant")
#: The tools' block types (their ``ToolSpec.block_types``): a code block of another language is text the model wrote,
#: not a call. ``python`` was ipython's too until 2024-09 (e0c79a41): such a block is a call where a system message
#: answers its message (``_OLD_PYTHON``), text otherwise (an example in a reply).
_OLD_PYTHON = "python"
_TOOLS = frozenset({"shell", "ipython", "py", "save", "append", "patch", "patch_many", "patch_anchored",
                    "view_anchored", "hashline_edit", "morph", "read", "tmux", "gh", "mcp", "memory", "todo",
                    "choice", "clarify", "complete", "elicit", "form", "progress", "restart", "vent", "youtube"})
#: A fence (``codeblock._extract_codeblocks``: 3 or more backticks at a line's start) and the languages whose block
#: a bare fence always closes (its ``_EXEC_LANGS``: they have no fences of their own).
_FENCE = re.compile(r"`{3,}")
_EXEC_LANGS = frozenset({"shell", "sh", "bash", "zsh", "fish", "ksh", "nu", "ps1", "powershell", "ipython"})
#: A shell block's here-document opener (``_find_heredoc_terminator``: ``<<``, not ``<<<``, its word after an
#: optional quote), the openers of a quoted string and an arithmetic expansion (no here-document opener inside:
#: ``_quoted_spans`` finds their close), a double-quoted string's rest, a comment's start.
_SHELL_LANGS = _EXEC_LANGS - {"ipython"}
_HEREDOC = re.compile(r"(?<!<)<<(?!<)-?\s*['\"\\]?(?P<word>[^\s'\"\\]+)")
_QUOTED = re.compile(r"['\"]|\$\(\(")
_DOUBLE_QUOTED_REST = re.compile(r'(?:\\.|[^"\\])*"')
_COMMENT = re.compile(r"(?:^|\s)#")
#: What changes an ``ipython`` line's string state: an escape, triple and single quotes, a comment.
_PY_TOKEN = re.compile(r"""\\.|"{3}|'{3}|[#'"]""")
#: A ``tool``-format call's head (``toolcall_re``); its JSON runs to the balanced brace (``find_json_end``).
_TOOLCALL = re.compile(r"^@(?P<tool>[^\r\n(]+?)\((?P<call>[\w\-:.]+)\):\s*(?=\{)", re.M)
#: gptme's XML calls (``_iter_from_xml``): ``<tool-use><tool args=..>content</tool></tool-use>`` and
#: ``<function_calls><invoke name=tool>content</invoke></function_calls>``.
_XML_WRAPPERS = ("tool-use", "function_calls")
_RETURN_CODE = re.compile(r"^(?:Return code: |Process interrupted \(return code: |Process exited with code )"
                          r"(?P<code>-?\d+)\)?\s*$", re.M)
_EXCEPTION = re.compile(r"^Exception during execution on line \d+:\n\s*(?P<error>.+)$", re.M)
#: gptme's own failure messages (``tools/__init__.py`` ``execute_msg``, ``constants.INTERRUPT_CONTENT``).
_TOOL_ERROR = re.compile(r"\A(?:Error executing tool |Error: |Error during |Error running |Command denied: |"
                         r"Tool '[^']*' is not available for execution|Tool '[^']*' was not executed|"
                         r"Interrupted by user)")
#: A user message gptme itself writes in autonomous mode (``tools/complete.py``: ``<system>No tool call
#: detected ...</system>``): no prompt of the user's.
_AUTO_REPLY = re.compile(r"\A<system>.*</system>\Z", re.S)
#: The keys a log's system prompt had before ``pinned`` (gptme 0.15-0.17, until 2024-09).
_OLD_KEYS = frozenset({"role", "content", "timestamp", "files"})


def matches(record: Any) -> bool:
    """A log's first line: gptme's system prompt (a message of its keys only, timed in ISO), ``pinned`` since 0.18
    (2024-09); before, a message of ``role``, ``content``, ``timestamp``, ``files`` whose text names gptme."""
    if not (isinstance(record, dict) and record.get("role") == "system" and isinstance(record.get("content"), str)
            and isinstance(record.get("timestamp"), str) and iso_time(record["timestamp"]) is not None):
        return False
    if record.get("pinned") is True:
        return set(record) <= _KEYS
    return set(record) <= _OLD_KEYS and "gptme" in record["content"]


split = whole_file


def _place(ctx: Context) -> tuple[str, str | None]:
    """The run's id (after ``gptme.``) and its conversation's id: the conversation's folder (and a branch's name),
    else the file's place and none."""
    path = named_path(ctx.source)
    if path.name == "conversation.jsonl" and path.parent.name:
        return path.parent.name, path.parent.name
    if path.parent.name == "branches" and path.suffix == ".jsonl" and path.parent.parent.name:
        return f"{path.parent.parent.name}.{path.stem}", path.parent.parent.name
    return file_run_key(ctx, 1), None


def _call_arguments(tool: str, args: str | None, body: str) -> dict[str, Any]:
    """A code block's call as arguments: a command's ``command``, Python's ``code``, a file tool's ``path`` and
    ``content``, any other tool's ``input`` (and its ``args``)."""
    if tool == "shell":
        return {"command": body}
    if tool in ("ipython", "py", _OLD_PYTHON):
        return {"code": body}
    if tool in ("save", "append", "patch", "morph", "read") and args:
        return {"path": args.strip(), "content": body} if body else {"path": args.strip()}
    return {k: v for k, v in (("args", args.strip() if args else None), ("input", body)) if v}


def _thinking_end(content: str) -> int | None:
    """Where gptme starts looking for code blocks (``_extract_codeblocks``): after a closed ``<think>`` or
    ``<thinking>`` section (its blocks are musings), none where one is left open."""
    for end_tag in ("</thinking>", "</think>"):
        if (end := content.find(end_tag)) != -1:
            tag = end_tag.replace("/", "")
            if re.search(rf"(?:^|\n){tag}", content[:end]) or tag not in content[:end]:
                return end + len(end_tag)
    if re.search(r"(?:^|\n)<think(?:ing)?>", content):
        return None
    return 0


def _quoted_spans(line: str) -> list[tuple[int, int]]:
    """Where a shell line's quoted strings and arithmetic expansions (``$((``..``))``) lie, in order (``_QUOTED``).
    Each opener's close is looked for once: where one finds none, no later opener of its kind does (a later ``"``
    inside the failed one's text resumes its scan), so the line is read in one pass. A regex of the three rescanned
    the rest of the line for each unclosed ``$((`` or ``"`` (8,000 ``$((``, 24 KB: 0.65 s)."""
    spans: list[tuple[int, int]] = []
    at, closes = 0, {"'": True, '"': True, "$((": True}
    while opener := _QUOTED.search(line, at):
        kind, start, end = opener[0], opener.start(), -1
        if closes[kind] and kind == "'":
            end = line.find("'", start + 1) + 1 or -1
        elif closes[kind] and kind == '"':
            end = rest.end() if (rest := _DOUBLE_QUOTED_REST.match(line, start + 1)) else -1
        elif closes[kind]:
            end = close + 2 if (close := line.find("))", opener.end())) != -1 else -1
        if end == -1:
            closes[kind], at = False, start + 1
        else:
            spans.append((start, end))
            at = end
    return spans


def _heredoc_word(line: str) -> str | None:
    """The word ending the here-document a shell line opens, where it opens one outside quotes and comments (an
    integer after ``<<`` is a shift); gptme's ``_find_heredoc_terminator`` without its quotes across lines."""
    if "<<" not in line:
        return None
    quoted = _quoted_spans(line)
    starts = [start for start, _ in quoted]
    comment = m.start() if (m := _COMMENT.search(line)) else len(line)
    for opener in _HEREDOC.finditer(line):
        if opener.start() >= comment:
            return None
        inside = (k := bisect.bisect_right(starts, opener.start()) - 1) >= 0 and opener.start() < quoted[k][1]
        if not inside and not opener["word"].lstrip("+-").isdigit():
            return opener["word"]
    return None


def _triple_quoted(line: str, state: str | None) -> str | None:
    """The triple quote an ``ipython`` line leaves open (``state``: the one open before it), a fence inside being
    Python text (gptme's ``_scan_ipython_triple_quote``; a single-quoted string ends with its line)."""
    single = None
    for token in _PY_TOKEN.findall(line):
        if state or single:
            if token == (state or single):
                state = single = None
        elif token == "#":
            break
        elif len(token) == 3:
            state = token
        elif len(token) == 1:
            single = token
    return state


def _text_follows(lines: list[str], at: int) -> bool:
    """Text, no fence, on the line after a bare fence: in a block of a non-shell language (or in a here-document) the
    fence is then no close (gptme's ``_extract_codeblocks``), a blank line or the message's end after it is."""
    return at + 1 < len(lines) and bool(lines[at + 1].strip()) and not _FENCE.match(lines[at + 1])


def _opens_nested(lines: list[str], at: int) -> bool:
    """A bare fence with text after it that opens a nested block, as gptme judges it (else it is text in the block):
    a bare fence within 20 lines is followed by more text (the outer block goes on)."""
    for j in range(at + 1, min(at + 20, len(lines))):
        if (fence := _FENCE.match(lines[j])) and lines[j].strip() == fence[0]:
            return any(line.strip() for line in lines[j + 1:j + 5])
        if fence and len(lines[j].strip()) > 3:
            return False
    return False


def _code_blocks(content: str) -> list[tuple[str, str, int, int]]:
    """The closed Markdown code blocks of a message, one pass over its lines as gptme's ``_extract_codeblocks``
    reads them: (language line, body, where the block starts and ends). A fence of 3 or more backticks opens; a
    fence with a language inside opens a nested block, which a bare fence closes; a bare fence of the opener's
    length closes, except in a block of a non-shell language or a shell here-document (its word found on a line of
    its own within 200 lines) where text follows it (``_text_follows``, ``_opens_nested``); in an ``ipython`` block
    a fence inside a triple-quoted string is text. A block left open takes the rest of the message and is no call.
    (gptme's tracking of a shell string across lines is not mirrored.)"""
    if (at := _thinking_end(content)) is None:
        return []
    lines = content[at:].split("\n")
    starts = [at]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    alone: dict[str, list[int]] = {}  # each stripped line's places, a here-document's end looked up there
    blocks, i = [], 0
    while i < len(lines):
        if not (opener := _FENCE.match(lines[i])):
            i += 1
            continue
        fence, lang, first, depth = len(opener[0]), lines[i][len(opener[0]):].strip(), i, 1
        heredoc: str | None = None
        quoted: str | None = None  # an ipython block's open triple quote
        for i in range(i + 1, len(lines)):
            if lang in _SHELL_LANGS:
                if heredoc is None:
                    if (word := _heredoc_word(lines[i])) and not alone:
                        for n, line in enumerate(lines):
                            alone.setdefault(line.strip(), []).append(n)
                    ends = alone.get(word, []) if word else []
                    if (k := bisect.bisect_right(ends, i)) < len(ends) and ends[k] <= i + 200:
                        heredoc = word
                elif lines[i].strip() == heredoc:
                    heredoc = None
            elif lang == "ipython":
                quoted = _triple_quoted(lines[i], quoted)
            if not (inner := _FENCE.match(lines[i])) or quoted:
                continue
            if lines[i].strip() == inner[0] and (len(inner[0]) == fence or depth > 1):
                if depth > 1:
                    depth -= 1
                elif (lang not in _EXEC_LANGS or heredoc) and _text_follows(lines, i):
                    depth += _opens_nested(lines, i)
                else:
                    blocks.append((lang, "\n".join(lines[first + 1:i]), starts[first], starts[i] + len(lines[i])))
                    break
            elif (tag := lines[i][len(inner[0]):].strip()) and (tag[0].isalnum() or tag[0] in "_/.~"):
                depth += 1
        else:
            break
        i += 1
    return blocks


def _fenced_spans(content: str) -> list[tuple[int, int]]:
    """Where the code blocks are that a ``tool``-format call is not looked for in, as gptme's
    ``_codeblock_char_ranges`` pairs them (a fence with the next bare fence of its length, ``<think>`` sections
    included; blocks ``_code_blocks`` reads otherwise): (start, end of the closing fence's line)."""
    fences = [(m.start(), len(m[0]), end if (end := content.find("\n", m.end())) != -1 else len(content))
              for m in re.finditer(r"^`{3,}", content, re.M)]
    bare: dict[int, list[int]] = {}  # a length's bare fences, by their order among the fences
    for n, (start, length, line_end) in enumerate(fences):
        if not content[start + length:line_end].strip():
            bare.setdefault(length, []).append(n)
    spans, n = [], 0
    while n < len(fences):
        start, length, _ = fences[n]
        closes = bare.get(length, [])
        if (k := bisect.bisect_right(closes, n)) < len(closes):
            spans.append((start, fences[closes[k]][2]))
            n = closes[k] + 1
        else:
            n += 1
    return spans


def _json_end(text: str, start: int) -> int | None:
    """The end of the JSON object at ``start``, its braces counted outside strings (gptme's ``find_json_end``);
    None where it never closes."""
    depth, in_string, escaped = 0, False, False
    for i in range(start, len(text)):
        c = text[i]
        if escaped:
            escaped = False
        elif c == "\\":
            escaped = True
        elif c == '"':
            in_string = not in_string
        elif not in_string and c in "{}":
            depth += 1 if c == "{" else -1
            if depth == 0:
                return i + 1
    return None


def _toolcall_arguments(text: str) -> Any:
    """A ``tool``-format call's arguments: JSON, or the Python dict gptme's non-streaming Anthropic call writes
    (``f"{block.input}"``), else the text as written."""
    try:
        return loads(text)
    except ValueError:
        pass
    try:
        arguments = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return {"input": text}
    return arguments if isinstance(arguments, dict) else {"input": text}


def _xml_calls(content: str) -> list[tuple[str, Any, str | None, int, int]]:
    """The calls of gptme's ``xml`` tool format (``_iter_from_xml``): each ``<tool-use>`` element's children,
    each ``<function_calls>``' ``<invoke name=..>``; a span that is no XML is none."""
    calls, at = [], 0
    while (start := min((i for w in _XML_WRAPPERS if (i := content.find(f"<{w}>", at)) != -1), default=-1)) != -1:
        wrapper = next(w for w in _XML_WRAPPERS if content.startswith(f"<{w}>", start))
        if (close := content.find(f"</{wrapper}>", start)) == -1:
            break
        at = close + len(wrapper) + 3
        try:
            element = ElementTree.fromstring(content[start:at])
        except ElementTree.ParseError:
            continue
        for child in element.iter("invoke") if wrapper == "function_calls" else element:
            tool = child.get("name") if wrapper == "function_calls" else child.tag
            if tool:
                args = " ".join(v for k, v in child.attrib.items() if k != "name") or None
                calls.append((tool, _call_arguments(tool, args, "".join(child.itertext()).strip()), None, start,
                              at))
    return calls


def _tool_calls(content: str, answered: bool) -> list[tuple[str, Any, str | None, int, int]]:
    """The calls an assistant message writes, in order, as gptme's ``ToolUse.iter_from_content`` finds them:
    (tool, arguments, call id, where the call starts and ends). Code blocks of a tool's language; ``tool``-format
    calls outside code blocks; in an ``xml``-format message (one with XML calls) those only. ``answered``: a system
    message follows the message (an old ``python`` block is then a call)."""
    if calls := _xml_calls(content):
        return calls
    blocks = _code_blocks(content)
    calls = []
    for lang, body, start, end in blocks:
        tool, _, args = lang.partition(" ")
        if tool in _TOOLS or (answered and tool == _OLD_PYTHON):
            calls.append((tool, _call_arguments(tool, args or None, body), None, start, end))
    at, spans = 0, iter(_fenced_spans(content) if _TOOLCALL.search(content) else ())
    span = next(spans, None)
    while head := _TOOLCALL.search(content, at):
        while span is not None and span[1] <= head.start():
            span = next(spans, None)
        if span is not None and span[0] <= head.start():
            at = span[1]
            continue
        if (end := _json_end(content, head.end())) is None:
            break
        calls.append((head["tool"].strip(), _toolcall_arguments(content[head.end():end]), head["call"],
                      head.start(), end))
        at = end
    return sorted(calls, key=lambda c: c[3])


def _failure(result: str, command: str | None) -> str | None:
    """A call's error from its result's text; None for one that did not fail (a command's "no" answers too:
    ``exit_code_error``)."""
    if code := _RETURN_CODE.search(result):
        return exit_code_error(result[:code.start()], int(code["code"]), command)
    if raised := _EXCEPTION.search(result):
        return short(raised["error"].strip(), 500, keep="head")
    if _TOOL_ERROR.match(result):
        return short(result.strip().splitlines()[0], 500, keep="head")
    return None


class _Conversation(SessionSteps):
    """A log's messages walked in order: prompts, and steps waiting for the system messages that answer them."""

    def __init__(self, clock: LocalClock) -> None:
        super().__init__()
        self.clock = clock  # gptme writes ``datetime.now()``: local time, no zone
        self.waiting: list[dict[str, Any]] = []  # the last assistant message's calls, in order, not yet answered
        self.models: list[str] = []
        self.auto_replies = 0  # the user messages gptme wrote itself (``_AUTO_REPLY``)

    def assistant(self, line: dict[str, Any], answered: bool) -> None:
        """An assistant message: its calls wait for their results; text after the last one may be the answer.
        ``answered``: a system message follows it."""
        self.settle()
        content = as_str(line.get("content")) or ""
        if model := as_str(as_dict(line.get("metadata")).get("model")):
            self.models.append(model)
        at = 0
        when = self.clock.at(wall_time(line.get("timestamp")))
        for tool, arguments, call_id, start, end in _tool_calls(content, answered):
            if text := content[at:start].strip():
                self.say(text, when)
            self.waiting.append(self.open_call(call_id, tool, arguments, when, _results=[]))
            at = end
        if rest := content[at:].strip():
            self.say(rest, when)

    def system(self, line: dict[str, Any]) -> None:
        """A system message after calls: the answer to the one its ``call_id`` names, else to the next waiting
        one, a code block before a ``tool``-format call (gptme runs a message's code blocks first and answers those
        calls by their id), a call's further messages joining the last one's."""
        text = as_str(line.get("content")) or ""
        call_id = line.get("call_id")
        step = self.by_call.get(call_id) if isinstance(call_id, str) else None
        if step is None and self.waiting:
            named = {id(s) for s in self.by_call.values()}
            unanswered = [s for s in self.waiting if not s["_results"]]
            step = next((s for s in unanswered if id(s) not in named),
                        unanswered[0] if unanswered else self.waiting[-1])
        if step is not None and text.strip():
            step["_results"].append(text)

    def settle(self, last: bool = False) -> None:
        """The calls waiting take their results: observation and error. ``last``: the file ends after them, so a
        call with no result never finished; one the conversation went on past is a block gptme did not run (it
        leaves such blocks unpaired on purpose, ``execute_msg``), no failure."""
        for step in self.waiting:
            results = step.pop("_results")
            if not results:
                step["error"] = NEVER_ANSWERED if last else None
                continue
            result = "\n\n".join(results)
            step["observation"] = result
            step["error"] = _failure(result, command_line(step.get("arguments")))
        self.waiting, self.by_call = [], {}


def to_trajectory(record: Any, ctx: Context) -> Trajectory:
    lines = as_records(record, "gptme conversation")
    if not matches(lines[0]):
        raise RecordError("not a gptme conversation log: expected JSON lines opening with gptme's system prompt "
                          '({"role": "system", "content": ..., "timestamp": ..., "pinned": true}), then the messages')
    # where each message stands in the file (``line N``), blank and malformed lines counted as the reader counts them
    places = [p for p, r in zip(item_positions(record), record) if isinstance(r, dict)] \
        if isinstance(record, list) else ["line 1"]
    # gptme rewrites the whole file on each message (``Log.write_jsonl``): its last time against the mtime may tell
    # the zone, as Trae's ``end_time`` does
    clock = local_clock(ctx.source, written=wall_time(lines[-1].get("timestamp")))
    walk = _Conversation(clock)
    for number, (place, line) in enumerate(zip(places, lines), 1):
        role = line.get("role")
        if role not in _ROLES:
            raise RecordError(f"{place}: role {role!r}; a gptme log line is a message of role {', '.join(_ROLES)}")
        if not isinstance(line.get("content"), str):
            raise RecordError(f"{place}: {'an' if role == 'assistant' else 'a'} {role} message whose content is "
                              f"{json_kind(line.get('content'))}; a gptme message's content is text")
        if role == "assistant":
            walk.assistant(line, number < len(lines) and lines[number].get("role") == "system")
        elif role == "system" and number > 1:
            walk.system(line)
        elif role == "user" and (text := line["content"].strip()):
            walk.settle()
            walk.flush()
            if _AUTO_REPLY.match(text):
                walk.auto_replies += 1
            else:
                walk.prompts.append(text)
    walk.settle(last=True)
    walk.close()
    if not walk.prompts:
        raise RecordError("no user message in this gptme conversation log: the conversation was opened and never "
                          "asked anything")
    run, conversation = _place(ctx)
    metadata: dict[str, Any] = {
        "source_format": NAME,
        "session_id": conversation,
        "models": sorted(set(walk.models)) if len(set(walk.models)) > 1 else None,
        "user_prompts": prompt_list(walk.prompts[1:]) or None,
        "auto_replies": walk.auto_replies or None,
        TIME_ZONE: clock.basis if (opened := wall_time(lines[0].get("timestamp"))) and opened.tzinfo is None else None,
    }
    return session_trajectory(ctx, run_id=f"{NAME}.{run}", task=walk.prompts[0],
                              model_id=walk.models[-1] if walk.models else None, steps=walk.steps,
                              metadata=metadata, last_error=None, error_cause=API_ERROR_CAUSE,
                              created_at=clock.at(opened))


def side_path(path: Path, fmt: str | None) -> str | None:
    """gptme's files beside a conversation's log (``_NO_RUN_FILES``), and a compacted view of it (autocompact's
    ``LogManager.create_view``: ``views/<name>.jsonl``, since 0.31, read as gptme's; the full history stays in the
    log): no run, the run is the ``conversation.jsonl`` beside them."""
    if path.parent.name == "views" and path.suffix == ".jsonl" and fmt in (None, NAME) \
            and (path.parent.parent / "conversation.jsonl").is_file():
        return ("gptme's compacted view of a conversation, no run: the run is the conversation.jsonl beside its "
                "views folder")
    if fmt is not None or path.name not in _NO_RUN_FILES or not (path.parent / "conversation.jsonl").is_file():
        return None
    return f"gptme's {_NO_RUN_FILES[path.name]}, no run: the run is the conversation.jsonl beside it"

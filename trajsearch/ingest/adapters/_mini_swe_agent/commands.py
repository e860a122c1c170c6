"""A text turn's bash command, and whether a command's reply says it failed.

Text-based configs (1.x, 2.x ``*_textbased``) put the command in a fence the
config's ``action_regex`` matches; exactly one match is the action, none or
several is what the agent itself rejects as a format error. A reply is a
failure when the harness reports an exception, or a non-zero return code
(``<returncode>``, the JSON observation of ``mini.yaml``, or
``extra.returncode``) with its decisive output line; exit code 1 with no
output is grep's / test's / diff's "no" and exit code 0 never fails; a 1.x
"timed out and has been killed" reply is an error. These are the harness's
conventions, apart from the message shapes (``messages``) and the walk that
pairs actions with replies (``steps``).
"""

from __future__ import annotations

import json
import re
from typing import Any

from trajsearch.actions import INTERRUPTED, not_run
from trajsearch.steps import strip_terminal_codes

from .._common import decisive_line, json_dict, short

#: The openings of mini-swe-agent's own action fences (no other tool's: its prompts and replies quote them).
FENCES = ("```mswea_bash_command", "<mswea_bash_command>")
#: The fences of the stock configs, tried in order when the dump does not name its own ``action_regex``.
DEFAULT_ACTION_REGEXES = (
    rf"{FENCES[0]}\s*\n(.*?)\n```",
    r"```bash\s*\n(.*?)\n```",
    rf"{FENCES[1]}(.*?)</mswea_bash_command>",
    r"```(?:bash|sh)\s*\n(.*?)```",
)

_RETURNCODE = re.compile(r"<returncode>\s*(-?\d+)\s*</returncode>")
_EXCEPTION = re.compile(r"<exception>(.*?)</exception>", re.S)
_OUTPUT = re.compile(r"<output(?:_tail)?>\n?(.*?)</output(?:_tail)?>", re.S)
_DOCKER_ARGV = re.compile(r"Command '\[.*\]'", re.S)  # the harness's argv list: noise
_TIMED_OUT = re.compile(r"<command>.*?</command> timed out and has been killed", re.S)


def text_action(content: str, regexes: tuple[str, ...]) -> tuple[str | None, str]:
    """(the one command in ``content``, the text around it); None when there is none or several."""
    for regex in regexes:
        try:
            found = list(re.finditer(regex, content, re.S))
        except re.error:
            continue
        if not found:
            continue
        if len(found) != 1:
            return None, content
        block = found[0]
        command = (block.group(1) if block.groups() else block.group(0)).strip()
        return command, content[: block.start()] + content[block.end():]
    return None, content


#: The textual call of the CS 294-264 homework agents' ReAct scaffold (its ``ResponseParser``): the last
#: ``----BEGIN_FUNCTION_CALL----``, the function's name, then ``----ARG----`` name ``----VALUE----`` value pairs up
#: to ``----END_FUNCTION_CALL----`` (saved cut short, or not at all, where it was the model's stop sequence).
_CALL_BEGIN = "----BEGIN_FUNCTION_CALL----"
_CALL_END = re.compile(r"----END_FUNCTION_CALL(?:----)?")


#: SWE-agent's XML function-calling syntax (``xml_function_calling``), which SWE-smith's trajectories use:
#: ``<function=name>`` then ``<parameter=name>value</parameter>`` pairs, ``</function>`` (missing where it was the
#: model's stop sequence, as in SWE-Play's trajectories: the call then runs to the next one or the end).
_XML_CUT_CALL = re.compile(r"<function=([\w.-]+)>(.*?)(?=<function=|\Z)", re.S)
_XML_TAG = {kind: re.compile(rf"<{kind}=([\w.-]+)>|</{kind}>") for kind in ("function", "parameter")}


def _outermost(text: str, kind: str) -> list[tuple[str, int, str]]:
    """(name, start, inner text) of each closed ``<kind=name>...</kind>`` element of ``text`` that no other one
    holds: a parameter's value may quote the syntax itself (a ``create`` of a call parser's test, a prompt
    template), and the tags it quotes are its text, not calls or parameters of their own."""
    found, depth, opened = [], 0, None
    for tag in _XML_TAG[kind].finditer(text):
        if tag.group(1) is not None:
            opened, depth = (tag if depth == 0 else opened), depth + 1
        elif depth:
            depth -= 1
            if depth == 0:
                found.append((opened.group(1), opened.start(), text[opened.end():tag.start()]))
    return found


def _xml_calls(content: str) -> list[tuple[str, int, str]]:
    """(name, start, body) of the XML calls of a reply: the outermost closed ones; where the reply closes none
    (``</function>`` was the model's stop sequence), each runs to the next ``<function=`` or the end."""
    if "</function>" in content:
        return _outermost(content, "function")
    return [(m.group(1), m.start(), m.group(2)) for m in _XML_CUT_CALL.finditer(content)]


def _xml_parameters(body: str) -> dict[str, str]:
    """A call's outermost parameters, each value without the newline after its opening tag and before its end."""
    return {name: value.removeprefix("\n").removesuffix("\n") for name, _, value in _outermost(body, "parameter")}


def function_call(content: str) -> tuple[str, dict[str, str], str] | None:
    """(name, arguments, the text before it) of a call written as text: a homework agent's, parsed as its
    scaffold parses it, or SWE-agent's XML one (the last call counts); None when there is none."""
    begin = content.rfind(_CALL_BEGIN)
    if begin == -1:
        xml = _xml_calls(content)
        if not xml:
            return None
        name, start, body = xml[-1]
        return name, _xml_parameters(body), content[:start]
    block = _CALL_END.split(content[begin + len(_CALL_BEGIN):], maxsplit=1)[0]
    name, *pairs = block.split("----ARG----")
    name = name.strip()
    if not name or len(name.split()) != 1:  # no call, or the template's own text
        return None
    arguments = {}
    for pair in pairs:
        arg, found, value = pair.partition("----VALUE----")
        if not found:  # the name on its own line, then the value (ChiChuRita's agent runs such calls)
            arg, _, value = pair.strip().partition("\n")
        if arg.strip():
            arguments[arg.strip()] = value.strip()
    return name, arguments, content[:begin]


#: The placeholder result 2.x gives the calls of a turn it stopped running (``format_toolcall_observation_messages``:
#: ``exception_info``): its interactive CLI (which Harbor runs) stops at the call that submits, pads that call and any
#: later one with it, and puts the real output in the ``exit`` message (Harbor's conversion drops it). A later call
#: never ran (``not run: ...``); the submitting one did, and its placeholder is no failure of it (the adapters'
#: ``SUBMIT`` rules).
NOT_EXECUTED = "action was not executed"
#: The word a submitting command echoes (2.x and late 1.x; ``MINI_SWE_AGENT_FINAL_OUTPUT`` before): the one rule
#: both readers of mini-swe-agent's runs (its own files, Harbor's ATIF) tell the submitting call by.
SUBMIT = re.compile(r"COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT|MINI_SWE_AGENT_FINAL_OUTPUT")


def _failed_command(rc: int | None, output: str, exception: str | None) -> str | None:
    if exception and exception.strip() == NOT_EXECUTED:
        return not_run(NOT_EXECUTED)
    if exception and exception.strip():  # the harness's own report, e.g. a command killed after its time limit
        return short(_DOCKER_ARGV.sub("Command", exception.strip()))
    if rc is None or rc == 0:
        return None
    line = decisive_line(output)
    if line is None:
        return None if rc == 1 else f"exit code {rc} (no output)"
    return f"{line} (exit code {rc})"


def _json_observation(content: str) -> dict[str, Any] | None:
    text = content.strip()
    return json_dict(text) if text.startswith("{") and '"returncode"' in text else None


#: A string of JSON text, escapes and all.
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def without_terminal_codes(content: str) -> str:
    """A reply without the terminal's codes (``steps.strip_terminal_codes``), also inside the strings of 2.x
    ``mini.yaml``'s JSON observation: its template renders the output through Jinja's ``tojson``, which writes ESC
    as the six characters ``\\u001b``, so no code is found in the text itself (Maven's ``\\u001b[0m``)."""
    content = strip_terminal_codes(content)
    if "\\u001" not in content.lower() or _json_observation(content) is None:
        return content

    def string_without_codes(literal: re.Match[str]) -> str:
        value = json.loads(literal.group(0))
        return json.dumps(strip_terminal_codes(value)) if "\x1b" in value else literal.group(0)

    return _JSON_STRING.sub(string_without_codes, content)


#: mini-swe-agent's reply when the user refuses a command in confirm mode (interactive agents,
#: ``interrupt_type: "UserRejection"`` since 1.x; older files have the text only).
_REJECTED = re.compile(r"\s*Commands? not executed\. The user rejected your command")
#: The interactive agent's reply when the user pressed Ctrl+C during a turn (1.x and 2.x ``interactive.py``; 2.x also
#: marks it ``interrupt_type: "UserInterruption"``, which its ``Switched to human mode.`` shares): what ran was cut off.
_INTERRUPTED = re.compile(r"\s*Interrupted by user:\s*(.*)", re.S)


def interrupted(content: str) -> str | None:
    """The error of a turn the user interrupted (Ctrl+C), with the comment typed at the prompt; None otherwise."""
    found = _INTERRUPTED.match(content)
    return f"{INTERRUPTED}: {short(found.group(1).strip())}" if found else None
#: The replies of a mini-swe-agent-derived ReAct agent (CS 294-264 homework, saved as ``system`` or ``user``
#: messages): a tool that raised (ChiChuRita's ``Tool '<name>' error:``, mbhaskar1's ``Error executing '<name>':``,
#: 23phillipsm's ``Error executing <name>:``, renwang435's ``Error calling function '<name>':`` and ``Tool '<name>'
#: raised an exception:``), the agent backing off after it raised again, a call it could not make (23phillipsm's
#: ``Unknown function:``, the scaffold's ``Error in step N:``), a turn with no function call
#: (ChiChuRita's ``Format error:``, whxwhx's ``ParserError:``, renwang435's ``Warning: No valid function call``).
_AGENT_ERROR = re.compile(
    r"(Tool '[^']+' error|AUTO-BACKTRACK applied due to repeated '[^']+' errors|Tool '[^']+' raised an exception"
    r"|Error (?:executing|calling function) '?[^'\s:]+'?|Unknown function|Error in step \d+):[ \t]*(.*)", re.S)
_FORMAT_ERROR = re.compile(r"(?:Format error|ParserError): .*|Warning: No valid function call found\b.*")
#: renwang435's agent opens each tool's reply with this line; what the tool said follows.
_OUTPUT_HEADER = re.compile(r"\[Tool '[^']+' output\]\n")
#: What follows the complaint of a ``ParserError:`` reply: how to write a call.
_INSTRUCTIONS = re.compile(r"(?<=\.)\.?\s+You must ")
#: Any reply of such an agent: a tool's ``Result:``, or one of the above.
_AGENT_REPLY = re.compile(rf"Result:\n|{_AGENT_ERROR.pattern}|{_FORMAT_ERROR.pattern}", re.S)
#: Its ``Result:`` of a tool that returned: no return code is kept, so only output that opens as a failure (a tool's
#: ``error:`` line, a traceback, the shell's own complaint) is one; a file's text merely mentioning errors is not.
_RESULT_FAILED = re.compile(
    r"Result:\n\s*(?:(?:error|fatal|ERROR|FATAL):\s|Traceback \(most recent call last\):|(?:ba)?sh: )")


def step_error(content: str, extra: dict[str, Any]) -> str | None:
    """Decisive error line of a command reply, or None if it succeeded."""
    exception = _EXCEPTION.search(content)
    if exception:
        return _failed_command(None, "", exception.group(1))
    code = _RETURNCODE.search(content)
    if code:
        out = _OUTPUT.search(content)
        return _failed_command(int(code.group(1)), out.group(1) if out else _RETURNCODE.sub("", content), None)
    observed = _json_observation(content)
    if observed is not None:
        rc = observed.get("returncode")
        output = observed.get("output")
        if output is None:
            output = "\n".join(str(observed.get(k) or "") for k in ("output_head", "output_tail"))
        return _failed_command(rc if isinstance(rc, int) else None, str(output), observed.get("exception_info"))
    if "returncode" in extra or extra.get("exception_info"):
        rc = extra.get("returncode")
        output = strip_terminal_codes(str(extra.get("raw_output") or content))  # 2.x keeps the output as it came
        return _failed_command(rc if isinstance(rc, int) else None, output,
                               extra.get("exception_info") if isinstance(extra.get("exception_info"), str) else None)
    if _TIMED_OUT.search(content):
        return short(_TIMED_OUT.search(content).group(0))
    if extra.get("interrupt_type") == "UserRejection" or _REJECTED.match(content):
        return not_run(short(content.strip().splitlines()[0]))  # the user refused to run it (confirm mode)
    return interrupted(content) or _react_error(content)


def is_agent_reply(content: str) -> bool:
    """Whether a ``system`` message is worded as a derived ReAct agent words its replies (see ``_AGENT_REPLY``)."""
    return _AGENT_REPLY.match(content) is not None


#: mini-swe-agent 1.x's stock ``format_error_template`` (its default and SWE-bench configs), for a run that saved no
#: config of its own.
STOCK_FORMAT_ERROR_TEMPLATE = (
    "Please always provide EXACTLY ONE action in triple backticks, found {{actions|length}} actions.")
_JINJA_FIELD = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", re.S)


def format_error_opening(template: Any) -> re.Pattern[str] | None:
    """What a reply rendered from a ``format_error_template`` opens with: the template's first line, its Jinja fields
    as wildcards; None when that line is mostly fields (2.x's templates open with ``{% if ... %}``: their runs mark
    the reply ``interrupt_type: FormatError`` instead)."""
    if not isinstance(template, str):
        return None
    first = template.strip().split("\n", 1)[0]
    literal = _JINJA_FIELD.split(first)
    if sum(len(part.strip()) for part in literal) < 20:
        return None
    return re.compile(".*?".join(re.escape(part) for part in literal))


def says_format_error(content: str, extra: dict[str, Any], opening: re.Pattern[str] | None) -> bool:
    """Whether a reply is the agent rejecting a turn's format (nothing ran): 2.x's ``interrupt_type: FormatError``,
    the run's own ``format_error_template``, or a derived ReAct agent's wording (``_FORMAT_ERROR``)."""
    if extra.get("interrupt_type") == "FormatError" or _FORMAT_ERROR.match(content):
        return True
    return opening is not None and opening.match(content.lstrip()) is not None


def _react_error(content: str) -> str | None:
    """The error a derived ReAct agent's reply reports (see ``_AGENT_ERROR``), None for a plain result."""
    content = _OUTPUT_HEADER.sub("", content, count=1) if _OUTPUT_HEADER.match(content) else content
    if raised := _AGENT_ERROR.match(content):
        said = decisive_line(raised.group(2))
        return short(f"{raised.group(1)}: {said}" if said else f"{raised.group(1)} (no message)")
    if _FORMAT_ERROR.match(content):  # the complaint, not the instructions after it ("... marker.. You must ...")
        return short(_INSTRUCTIONS.split(content.splitlines()[0], maxsplit=1)[0])
    if _RESULT_FAILED.match(content):
        return decisive_line(content.removeprefix("Result:"))
    return None

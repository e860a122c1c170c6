"""Finding the user's instruction inside an agent's rendered first prompt.

Agent harnesses do not record the task on its own: they record the prompt
they rendered from a template, the task wrapped in kilobytes of boilerplate
(tool docs, workflow advice, format rules, in-context examples). Two ways
back to the instruction, used by the file-per-run adapters:

- :func:`from_template`: when the dump also saved the template
  (mini-swe-agent's ``instance_template``, SWE-agent's ``replay_config``), the
  literal text around the task placeholder (``{{task}}``,
  ``{{problem_statement}}``, ``{instruction}``) anchors it in the rendering.
- :func:`from_markers`: the delimiters the well-known templates put around
  the task, each taken from its producer's source:

  * ``<pr_description>`` … ``</pr_description>`` (SWE-agent 1.x, mini-swe-agent
    SWE-bench configs), minus "Consider the following PR description:";
  * ``ISSUE:`` … ``INSTRUCTIONS:`` / ``(Open file:`` (SWE-agent 0.x; ``INSTRUCTION:`` in CodeR's
    multi-agent prompts built on it);
  * ``Task Description:`` … ``Current terminal state:`` (Harbor's Terminus /
    Terminus-2 JSON and XML templates);
  * ``NEW TASK DESCRIPTION`` … ``END OF NEW TASK DESCRIPTION`` (OpenHands'
    in-context-learning wrapper for models without function calling);
  * ``Please solve this issue:`` … ``You can execute bash commands`` (the
    mini-swe-agent default / mini / textbased templates);
  * ``**Original Task:**`` … ``**Summary from Previous Agent:**`` (Terminus-2's
    hand-off prompt after a context summarization);
  * ``<issue_description>`` … ``</issue_description>`` (OpenHands' SWE-bench-style
    evaluation prompts);
  * ``Current Task:`` … ``This is the expected criteria for your final answer:``
    / ``Begin! This is VERY important`` (CrewAI's ``task`` and ``expected_output``
    prompt slices, seen in the traces of CrewAI agents);
  * smolagents (``prompts/code_agent.yaml``, ``memory.py``): ``New task:`` opening the task
    message, ``Here is your task:`` and a fenced block before "First in part 1, write the facts
    survey" (the initial plan).
"""

from __future__ import annotations

import re

#: A Jinja placeholder, statement or comment: where a template's literal text stops.
_JINJA = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", re.S)
_MIN_ANCHOR = 8  # a shorter literal (", " or "\n") anchors nothing reliably
_MAX_ANCHOR = 200  # the literal next to the placeholder; far boilerplate may differ between versions

_MARKERS: tuple[re.Pattern[str], ...] = (
    re.compile(r"<pr_description>\s*(?:Consider the following PR description:\s*)?(.*?)\s*</pr_description>", re.S),
    re.compile(
        r"-{5,} NEW TASK DESCRIPTION -{5,}\s*\n(.*?)\n\s*-{5,} END OF NEW TASK DESCRIPTION -{5,}", re.S
    ),
    re.compile(r"(?:^|\n)Task Description:\s*\n(.*?)\n\s*\nCurrent [Tt]erminal [Ss]tate:", re.S),
    re.compile(r"(?:^|\n)ISSUE:\s*\n(.*?)\n\s*(?:INSTRUCTIONS?:|\(Open file:)", re.S),
    re.compile(r"^\s*Please solve this issue:\s*(.*?)\n\s*\nYou can execute bash commands", re.S),
    re.compile(r"\*\*Original Task:\*\*\s*(.*?)\n\s*\n\*\*Summary from Previous Agent:\*\*", re.S),
    re.compile(r"<issue_description>\s*(.*?)\s*</issue_description>", re.S),
    re.compile(r"(?:^|\n)Current Task:[ \t]*(.*?)\n\s*\n(?:This is the expected criteria for your final answer:|"
               r"Begin! This is VERY important)", re.S),
    re.compile(r"^New task:\n(.*)$", re.S),
    re.compile(r"Here is your task:\n```\n(.*?)\n```\nFirst in part 1, write the facts survey", re.S),
)


def _split_template(template: str, names: tuple[str, ...]) -> tuple[str, str, bool, bool] | None:
    """(literal text before the placeholder, literal text after it, whether each reaches the template's edge)."""
    alternatives = "|".join(re.escape(n) for n in names)
    jinja = re.search(r"\{\{-?\s*(?:%s)\s*-?\}\}" % alternatives, template)
    if jinja:
        before, after = _JINJA.split(template[: jinja.start()]), _JINJA.split(template[jinja.end() :])
        return before[-1], after[0], len(before) == 1, len(after) == 1
    fmt = re.search(r"(?<!\{)\{(?:%s)\}(?!\})" % alternatives, template)
    if fmt:  # str.format: other fields are {name}, literal braces are doubled
        field = re.compile(r"(?<!\{)\{[A-Za-z_]\w*\}(?!\})")
        before, after = field.split(template[: fmt.start()]), field.split(template[fmt.end() :])
        unescape = lambda text: text.replace("{{", "{").replace("}}", "}")  # noqa: E731
        return unescape(before[-1]), unescape(after[0]), len(before) == 1, len(after) == 1
    return None


def from_template(rendered: str, template: str | None, names: tuple[str, ...] = ("task",)) -> str | None:
    """The value a template's placeholder took in ``rendered``, or None when it cannot be anchored.

    ``names`` are the placeholder's variable names: Jinja ``{{ name }}`` or
    ``str.format`` ``{name}``. The literal text next to the placeholder (at
    most ``_MAX_ANCHOR`` characters of it) must be found on both sides, unless
    the placeholder starts or ends the template; otherwise None.
    """
    if not isinstance(template, str) or not isinstance(rendered, str):
        return None
    parts = _split_template(template, names)
    if parts is None:
        return None
    head, tail, head_is_edge, tail_is_edge = parts
    head_anchor, tail_anchor = head.strip()[-_MAX_ANCHOR:], tail.strip()[:_MAX_ANCHOR]
    start, end = 0, len(rendered)
    if head_anchor:
        if len(head_anchor) < _MIN_ANCHOR and not head_is_edge:
            return None
        pos = rendered.find(head_anchor)
        if pos < 0:
            return None
        start = pos + len(head_anchor)
    elif not head_is_edge:  # the placeholder follows other template output: nothing to anchor on
        return None
    if tail_anchor:
        if len(tail_anchor) < _MIN_ANCHOR and not tail_is_edge:
            return None
        pos = rendered.find(tail_anchor, start)
        if pos < 0:
            return None
        end = pos
    elif not tail_is_edge:
        return None
    return rendered[start:end].strip() or None


def from_markers(rendered: str) -> str | None:
    """The instruction between the delimiters of a well-known template (module docstring), or None."""
    if not isinstance(rendered, str):
        return None
    for pattern in _MARKERS:
        found = pattern.search(rendered)
        if found and found.group(1).strip():
            return found.group(1).strip()
    return None


def instruction(rendered: str, templates: tuple[str | None, ...] = (), names: tuple[str, ...] = ("task",)) -> str:
    """The instruction in a rendered first prompt: by its template, else by markers, else the whole text."""
    for template in templates:
        value = from_template(rendered, template, names)
        if value:
            return value
    return from_markers(rendered) or rendered.strip()

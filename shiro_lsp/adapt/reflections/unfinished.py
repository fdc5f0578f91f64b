"""Replies that end the turn with the work undone: code shown in prose instead of written, a step
announced and not taken, no answer after tool calls, a tool result written by the model itself, a
call shown inside prose or written in a form Shiro cannot read, a workspace module taken for a
missing package. Each gets one short instruction back; none carries an example value a model
could copy. A model that does the work rarely meets these conditions, so it rarely pays.
"""

from __future__ import annotations

import re

from shiro_lsp.adapt.formats.text_calls import is_call_shaped, writes_a_result
from shiro_lsp.adapt.reflections.base import Reflection, Reply, SendBack, TurnFacts
from shiro_lsp.adapt.reflections.replies import FENCED, code_blocks, file_lines, named_paths

UNRUN_CHANGE = (
    "Nothing was changed: you made no tool call. If a file should change, make the tool call now. "
    "If not, give your final answer."
)
UNRUN_WRITE = (
    "Nothing was changed. If a file should change, write it out now: its path alone on one line, then "
    "its whole new content in a fenced code block. If not, give your final answer."
)
LOCAL_MODULE = (
    "{module} is not a package to install: it is {file}, in the workspace. Compare what the code imports "
    "from it with what {file} defines, and fix the file that is wrong."
)
CALL_IN_PROSE = "A call inside prose does not run. To call a tool, reply with nothing but the call."
UNRUN_STEP = "You said what you will do next but made no tool call. Do it now with a tool call."
WRITTEN_RESULT = (
    "You wrote a tool result yourself. Results come only from tool calls: make the call, "
    "or give your final answer."
)
FINAL_ANSWER = "Now give the user your final answer: what you did or found, in a few sentences."
MIN_SHARED_LINE = 3
"""A code block shares a file's line when a stripped line longer than this is in both."""

_ANNOUNCES = re.compile(
    r"^(?:(?:now|next|then|first|so)\b[,\s]*)?"
    r"(?:I will|I'll|I am going to|I'm going to|let me|let's|we will|we'll|I need to|we need to)\s+"
    r"(?:now\s+|first\s+|then\s+|next\s+)?"
    r"(?:edit|update|modify|change|add|create|write|run|fix|read|open|check|look|search|implement|apply|"
    r"make|test|execute|remove|delete|replace|rename|use|call|insert|save|proceed|start|verify|try|retry|"
    r"attempt|do|continue|adjust|correct|refactor|install|debug|investigate|inspect|examine|review|find|"
    r"locate|list|view|see|print|define|import|move|ensure|handle|go)\b",
    re.I,
)
_MISSING_MODULE = re.compile(
    r"\bpip3? install\s+`?(?P<installed>[A-Za-z_]\w*)"
    r"|`?(?P<missing>[A-Za-z_]\w*)`? (?:module|package) (?:is|was) not (?:found|installed)"
    r"|No module named '?(?P<named>[A-Za-z_]\w*)",
    re.I,
)
_CALL_NAME = re.compile(r"""\bname["']?\s*[=:]\s*["'](?P<name>[\w-]+)["']""")


def unrun(facts: TurnFacts) -> str:
    return UNRUN_WRITE if facts.writes_out else UNRUN_CHANGE


class CodeInProse(Reflection):
    """A reply that shows code for a file instead of writing it is sent back to write it."""

    name, group, exclusive, wants_a_change = "code_in_prose", "unfinished", True, True

    def answer(self, reply: Reply, facts: TurnFacts) -> SendBack | None:
        if facts.changed or not shows_unwritten_code(reply.text, facts):
            return None
        return SendBack(unrun(facts), "code in prose")


class LocalModule(Reflection):
    """A reply that calls a workspace module a missing package is sent back to the file it is."""

    name, group, exclusive, wants_a_change = "local_module", "unfinished", True, True

    def answer(self, reply: Reply, facts: TurnFacts) -> SendBack | None:
        blamed = None if facts.changed else local_module_blamed(reply.text, facts)
        if blamed is None:
            return None
        module, file = blamed
        return SendBack(LOCAL_MODULE.format(module=module, file=file), "a local module taken for a package")


class UnreadableCall(Reflection):
    """A reply that tries a call in a form Shiro cannot read is sent back to make the call."""

    name, group, exclusive = "unreadable_call", "unfinished", True

    def answer(self, reply: Reply, facts: TurnFacts) -> SendBack | None:
        if not reply.reads_text_calls or not names_a_call(reply.text, facts.tools):
            return None
        return SendBack(unrun(facts), "a call Shiro could not read")


class CallInProse(Reflection):
    """A tool call shown inside prose is sent back: only a reply that is nothing but the call runs."""

    name, group, exclusive = "call_in_prose", "unfinished", True

    def answer(self, reply: Reply, facts: TurnFacts) -> SendBack | None:
        if (
            not reply.reads_text_calls
            or facts.used_tools
            or not shows_a_call_in_prose(reply.text, facts.tools)
        ):
            return None
        return SendBack(CALL_IN_PROSE, "a call inside prose")


class AnnouncedStep(Reflection):
    """A reply that ends by announcing a step it did not take is sent back to take it."""

    name, group = "announced_step", "unfinished"

    def answer(self, reply: Reply, facts: TurnFacts) -> SendBack | None:
        return SendBack(UNRUN_STEP, "announced a step") if announces_a_step(reply.text) else None


class NoAnswer(Reflection):
    """A turn that would end silently after tool calls gets one step to answer."""

    name, group = "no_answer", "unfinished"

    def answer(self, reply: Reply, facts: TurnFacts) -> SendBack | None:
        return SendBack(FINAL_ANSWER, "no answer") if facts.used_tools and not reply.text.strip() else None


class InventedResult(Reflection):
    """A reply that writes a tool result itself is sent back: results come only from calls (and it
    is not shown as an answer)."""

    name, group, hides_reply = "invented_result", "unfinished", True

    def answer(self, reply: Reply, facts: TurnFacts) -> SendBack | None:
        return SendBack(WRITTEN_RESULT, "wrote a tool result") if writes_a_result(reply.text) else None


def shows_unwritten_code(text: str, facts: TurnFacts) -> bool:
    """The reply holds code for a file instead of writing it: a code block that is an existing named
    file changed (some of its lines, some new ones), or, when the user named a file that does not
    exist yet, a code block that is not a quote of an existing one."""
    blocks = code_blocks(text)
    if not blocks:
        return False
    existing: set[str] = set()
    new_file_named = False
    for path in named_paths(facts.words + "\n" + text):
        lines = file_lines(facts.workspace, path)
        if lines is not None:
            existing |= lines
        elif path in facts.words:
            new_file_named = True
    for block in blocks:
        kept = {line for line in block if line in existing}
        if kept == set(block):
            continue  # a quote
        if new_file_named or any(len(line) > MIN_SHARED_LINE for line in kept):
            return True
    return False


def local_module_blamed(text: str, facts: TurnFacts) -> tuple[str, str] | None:
    """A module the reply says to install, or calls missing, that is a file of the workspace
    (``x`` for ``x.py``): (module, file)."""
    for match in _MISSING_MODULE.finditer(text):
        module = match.group("installed") or match.group("missing") or match.group("named")
        file = f"{module}.py"
        if file_lines(facts.workspace, file) is not None:
            return module, file
    return None


def shows_a_call_in_prose(text: str, tools: frozenset[str]) -> bool:
    """A code block in the reply that is a call to an offered tool (prose around it: not run)."""
    return any(
        is_call_shaped(body) and any(m.group("name") in tools for m in _CALL_NAME.finditer(body))
        for body in (m.group("body") for m in FENCED.finditer(text))
    )


def names_a_call(text: str, tools: frozenset[str]) -> bool:
    """The reply is a tool call in a form that is not one (``<tool name="…">``, broken JSON):
    markup from its first character, naming an offered tool."""
    if not text.lstrip().startswith(("<", "{", "[", "`")):  # prose first: an example, or talk
        return False
    return any(m.group("name") in tools for m in _CALL_NAME.finditer(text))


def announces_a_step(text: str) -> bool:
    """The reply ends by announcing a step (its last sentence, code blocks aside)."""
    body = FENCED.sub("", text).strip()
    if not body:
        return False
    sentences = [s for s in re.split(r"(?<=[.!?:])\s+", body.splitlines()[-1].strip()) if s]
    return bool(sentences) and bool(_ANNOUNCES.match(sentences[-1]))

"""What the turn does when a model step makes no tool call: end the turn, or send it back once.

Small local models end their turn with the work undone: they show the new code in prose instead of
writing it, announce a step ("I will now edit …") and stop, stop with no answer at all after their
tool calls, or change a file and never run the command the user named to check it. Each of these
gets one short instruction back (a user message appended to the history, so the prompt prefix the
server has cached stays byte-identical), at most :data:`MAX_NUDGES` per turn; the text carries no
example values a model could copy. Big models rarely meet these conditions, so they rarely pay.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from shiro_lsp.adapt import is_call_shaped, writes_a_result
from shiro_lsp.errors import ToolError
from shiro_lsp.fs.jail import Roots, relative_posix, resolve_in_workspace
from shiro_lsp.messages import Message, succeeded
from shiro_lsp.tools.edits import PLANNERS
from shiro_lsp.tools.files import open_text

NUDGE_MARK_KEY = "shiroNote"
NUDGE_MARK = "nudge"
MAX_NUDGES = 2
"""Instructions sent back per turn for unrun work (the final-answer step is one more, once)."""

UNRUN_CHANGE = (
    "Nothing was changed: you made no tool call. If a file should change, make the tool call now. "
    "If not, give your final answer."
)
UNRUN_WRITE = (
    "Nothing was changed. If a file should change, write it out now: its path alone on one line, then "
    "its whole new content in a fenced code block. If not, give your final answer."
)
UNCHANGED_QUOTE = (
    "The code you showed is {path} as it already is: nothing was changed. Find the cause first, "
    "then change the file that holds it."
)
UNCHANGED_LISTING = (
    "{path} as you wrote it out is the file as it already is: nothing was changed. Write out the "
    "file with its change, or, if the workspace does not show what to change, say what you need to know."
)
UNCHANGED_BESIDE_THE_ERROR = (
    "{path} as you wrote it out is the file as it already is: nothing was changed. `{command}` fails "
    "in {file}, line {line}: `{code}`. Write out the file that must change, with its change."
)
LOCAL_MODULE = (
    "{module} is not a package to install: it is {file}, in the workspace. Compare what the code imports "
    "from it with what {file} defines, and fix the file that is wrong."
)
CALL_IN_PROSE = "A call inside prose does not run. To call a tool, reply with nothing but the call."
UNRUN_STEP = "You said what you will do next but made no tool call. Do it now with a tool call."
RUN_NAMED = "You changed files but did not run `{command}`, which the user named. Run it now to check."
WRITTEN_RESULT = (
    "You wrote a tool result yourself. Results come only from tool calls: make the call, "
    "or give your final answer."
)
FINAL_ANSWER = "Now give the user your final answer: what you did or found, in a few sentences."

WROTE_A_RESULT = "wrote a tool result"
UNCOUNTED = frozenset({"no answer", WROTE_A_RESULT})
"""Sent back even after MAX_NUDGES (each still at most once): a turn must not end on them."""

NOTICE = "The model stopped with its work undone; Shiro sent it back to finish ({why})."

_FENCED = re.compile(r"```[^\n`]*\n(?P<body>.*?)```", re.S)
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
_COMMAND = re.compile(
    r"(?<![\w/.-])(?P<command>(?:python3?|node|bash|sh|npm|npx|yarn|pnpm|pytest|cargo|ruby|deno|uv)"
    r"(?:[ \t]+(?:-m[ \t]+[\w.]+|-[\w-]+|[\w./-]*[./][\w./-]*|test|run|\d+))*)"
    r"|(?<![\w/.-])(?P<script>\.?/?[\w./-]+\.(?:sh|py|js|mjs|ts|rb))\b"
)
_MISSING_MODULE = re.compile(
    r"\bpip3? install\s+`?(?P<installed>[A-Za-z_]\w*)"
    r"|`?(?P<missing>[A-Za-z_]\w*)`? (?:module|package) (?:is|was) not (?:found|installed)"
    r"|No module named '?(?P<named>[A-Za-z_]\w*)",
    re.I,
)
_CLAIMS_FIX = re.compile(r"\b(?:corrected|fixed|updated|modified|changed|new) (?:version|code|file)\b", re.I)
_CALL_NAME = re.compile(r"""\bname["']?\s*[=:]\s*["'](?P<name>[\w-]+)["']""")
_PATH = re.compile(r"(?<![\w/.-])[\w./-]*\w\w\.[A-Za-z][A-Za-z0-9]{0,7}\b")
MAX_QUOTED_FILE = 200_000
MIN_SHARED_LINE = 3
"""A code block shares a file's line when a stripped line longer than this is in both."""
_RAISED_AT = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+)', re.M)
_RUNNERS = frozenset({"python", "python3", "node", "bash", "sh", "ruby", "deno", "uv"})


@dataclass(frozen=True)
class NamedCommand:
    shown: str
    """The command as the user wrote it."""
    key: str
    """What a shell command must contain to count as running it (the script, or the command)."""
    checks_the_work: bool = False
    """The message tells to run it or says what it does now, rather than only mentioning it."""
    run_first: bool = False
    """Its output tells what the message does not: the user says to run it, or that it fails (its
    error names the cause), not what it prints (the message says that already)."""
    named: bool = True
    """False: the message names no command, but asks for a test file, and this runs it."""

    @property
    def shiro_may_run(self) -> bool:
        """Shiro may run it itself: it runs a named file or module (``python3 main.py``, ``bash t.sh``,
        ``python3 -m pytest``; not ``npm test`` or "a pytest test" read from prose) and it checks the work."""
        words = self.shown.split()
        runs_a_file = self.key != self.shown or "-m" in words or words[0].startswith(("./", "/"))
        return runs_a_file and self.checks_the_work


def named_command(prompt: str) -> NamedCommand | None:
    """The command the user's message names to check the work with (``python3 calc.py``, ``run
    test.sh``, ``npm test``), or None. Only a command or a script path counts, never prose."""
    for match in _COMMAND.finditer(prompt):
        command = match.group("command")
        if command is not None:
            command = command.rstrip(".")  # the sentence's full stop ("Run python3 report.py.")
            words = command.split()
            if words[0] in _RUNNERS and len(words) == 1:
                continue  # "python" alone is a language, not a command
            script = next((w for w in words[1:] if "." in w or "/" in w), None)
            told = _runs(prompt, match.start())
            after = prompt[match.end() :]
            checks = told or bool(_SAYS_WHAT_IT_DOES.match(after))
            return NamedCommand(command, script or command, checks, told or bool(_SAYS_IT_FAILS.match(after)))
        script = match.group("script")
        if script is not None and _runs(prompt, match.start()):
            return NamedCommand(script, script.lstrip("./"), True, True)
    return None


_TEST_FILE = re.compile(r"(?<![\w/.-])(?P<file>(?:[\w.-]+/)*(?:test_\w+|\w+_test)\.py)\b")


def test_file_command(prompt: str) -> NamedCommand | None:
    """The message asks for a pytest file it names (``test_mathutils.py``) and names no command to
    run it: ``python3 -m pytest`` on that file checks the work (a 1.5B model's tests assert wrong values)."""
    match = _TEST_FILE.search(prompt)
    if match is None:
        return None
    file = match.group("file")
    return NamedCommand(f"python3 -m pytest -q {file}", file, checks_the_work=True, named=False)


# The message says what the command does now ("python3 main.py fails"): it checks the work. Not a
# command the message only mentions ("shows how to run it: …").
_AFTER_THE_COMMAND = r"^(?:\s+[\w\"'-]+)?\s+(?:{verbs})\b"
_FAILS = "fails|crashes|errors|raises"
_SAYS_IT_FAILS = re.compile(_AFTER_THE_COMMAND.format(verbs=_FAILS), re.I)
_SAYS_WHAT_IT_DOES = re.compile(
    _AFTER_THE_COMMAND.format(verbs=_FAILS + "|prints|outputs|exits|returns|gives|shows|should"), re.I
)


def _runs(prompt: str, at: int) -> bool:
    """A bare script path counts when the user says to run it (``run test.sh``, ``./test.sh``)."""
    before = prompt[max(0, at - 12) : at].lower()
    return prompt[at:].startswith("./") or bool(re.search(r"\b(?:run|execute|running)\s+`?$", before))


@dataclass
class TurnGuard:
    """The state of one turn the guards need, fed by the loop after every tool step."""

    prompt: str
    workspace: Roots
    can_run_commands: bool
    tools: frozenset[str] = frozenset()
    """The tools offered this turn: an answer that names one as a call's name tried to call it."""
    reads_text_calls: bool = True
    """Whether calls written as text are read this step: where they are not (a model that made a
    native call, adapt/formats/text_calls.py), a call-shaped answer is text, never something to send back for."""
    writes_out: bool = False
    """The model writes files out in its reply (adapt/formats/whole_file.py), so that is what it is told to do."""
    asks_to_run: bool = True
    """False: the model is shown no tools, so Shiro runs the command the user named itself."""
    nudges: int = 0
    used_tools: bool = False
    changed_since_run: bool = False
    changed: bool = False
    command_refused: bool = False
    command_output: str = ""
    """What the named command printed when it last ran."""
    sent: set[str] = field(default_factory=set)
    command: NamedCommand | None = None

    def __post_init__(self) -> None:
        named = named_command(self.prompt)
        runnable = named is not None and named.shiro_may_run
        self.command = named if runnable else test_file_command(self.prompt) or named

    def saw_tools(self, results: list[dict[str, Any]], inputs: dict[str, Any]) -> None:
        """A tool step ran: ``results`` are its result parts, ``inputs`` each call's input by id."""
        self.used_tools = True
        for part in results:
            ok = succeeded(part)
            name = part.get("toolName")
            if name in PLANNERS and ok:
                self.changed = self.changed_since_run = True
            if name == "bash":
                command = inputs.get(str(part.get("toolCallId")), {})
                text = command.get("command", "") if isinstance(command, dict) else ""
                if not ok and "Not run" in _output_text(part):
                    self.command_refused = True
                elif self.command is not None and self.command.key in str(text):
                    self.changed_since_run = False
                    self.command_output = _output_text(part)

    def after_answer(self, message: Message | None) -> tuple[str, str] | None:
        """A step without tool calls ended: (instruction to send back, why) or None to end the turn."""
        text = reply_text(message)
        for why, instruction in self._wanted(text):
            if why in self.sent:
                continue
            if why not in UNCOUNTED and self.nudges >= MAX_NUDGES:
                continue
            self.sent.add(why)
            if why not in UNCOUNTED:
                self.nudges += 1
            return instruction, why
        return None

    def _wanted(self, text: str) -> list[tuple[str, str]]:
        wanted: list[tuple[str, str]] = []
        unrun = UNRUN_WRITE if self.writes_out else UNRUN_CHANGE
        quoted = None if self.changed else self._claimed_fix_of_unchanged_file(text)
        if quoted is not None:
            wanted.append(("an unchanged file shown as a fix", UNCHANGED_QUOTE.format(path=quoted)))
        elif self.writes_out and not self.changed and (same := self._unchanged_listing(text)):
            wanted.append(("an unchanged file written out", self._unchanged_listing_instruction(same)))
        elif not self.changed and self._shows_unwritten_code(text):
            wanted.append(("code in prose", unrun))
        elif not self.changed and (local := self._local_module_blamed(text)) is not None:
            wanted.append(
                ("a local module taken for a package", LOCAL_MODULE.format(module=local[0], file=local[1]))
            )
        elif self.reads_text_calls and self._names_a_call(text):
            wanted.append(("a call Shiro could not read", unrun))
        elif self.reads_text_calls and not self.used_tools and self._shows_a_call_in_prose(text):
            wanted.append(("a call inside prose", CALL_IN_PROSE))
        if announces_a_step(text):
            wanted.append(("announced a step", UNRUN_STEP))
        if self.asks_to_run and self.check_due() and self.command is not None and self.command.named:
            wanted.append(("named command not run", RUN_NAMED.format(command=self.command.shown)))
        if self.used_tools and not text.strip():
            wanted.append(("no answer", FINAL_ANSWER))
        if writes_a_result(text):
            wanted.append((WROTE_A_RESULT, WRITTEN_RESULT))
        return wanted

    def _shows_unwritten_code(self, text: str) -> bool:
        """The answer holds code for a file instead of writing it: a code block that is an
        existing named file changed (some of its lines, some new ones), or, when the user named a
        file that does not exist yet, a code block that is not a quote of an existing one."""
        blocks = _code_blocks(text)
        if not blocks:
            return False
        existing: set[str] = set()
        new_file_named = False
        for path in _named_paths(self.prompt + "\n" + text):
            lines = _file_lines(self.workspace, path)
            if lines is not None:
                existing |= lines
            elif path in self.prompt:
                new_file_named = True
        for block in blocks:
            kept = {line for line in block if line in existing}
            if kept == set(block):
                continue  # a quote
            if new_file_named or any(len(line) > MIN_SHARED_LINE for line in kept):
                return True
        return False

    def _local_module_blamed(self, text: str) -> tuple[str, str] | None:
        """A module the answer says to install, or calls missing, that is a file of the workspace
        (``names`` for ``names.py``): (module, file). A 1.5B model blames pip for a misspelt import."""
        for match in _MISSING_MODULE.finditer(text):
            module = match.group("installed") or match.group("missing") or match.group("named")
            file = f"{module}.py"
            if _file_lines(self.workspace, file) is not None:
                return module, file
        return None

    def _claimed_fix_of_unchanged_file(self, text: str) -> str | None:
        """The named file a code block shows exactly as it is, in an answer that calls it fixed."""
        if not _CLAIMS_FIX.search(text):
            return None
        blocks = [set(block) for block in _code_blocks(text)]
        for path in _named_paths(self.prompt + "\n" + text):
            lines = _file_lines(self.workspace, path)
            if lines is not None and any(_is_the_file(block, lines) for block in blocks):
                return path
        return None

    def _unchanged_listing(self, text: str) -> str | None:
        """A file written out (named alone on the line before the block) exactly as it is, for a
        request that is not a question: a 1.5B model asked for what the workspace cannot tell it
        (a ticket's bug, a password) writes a file out unchanged and stops."""
        if self.prompt.rstrip().endswith("?"):
            return None  # quoting a file can answer a question
        after_previous = 0
        for match in _FENCED.finditer(text):
            path = _listed_file(text[after_previous : match.start()])
            after_previous = match.end()
            if path is None:
                continue
            block = {line.strip() for line in match.group("body").splitlines() if line.strip()}
            lines = _file_lines(self.workspace, path)
            if lines is not None and _is_the_file(block, lines):
                return path
        return None

    def _unchanged_listing_instruction(self, path: str) -> str:
        """What a model that wrote a file out unchanged is told: where the failing command's error is
        raised, when it names a workspace line. A 1.5B model shown a ``KeyError`` wrote the data file out
        unchanged, then said it "remains unchanged"; the traceback's own file was the one to change."""
        raised = raised_at(self.command_output, self.workspace)
        if self.command is None or raised is None:
            return UNCHANGED_LISTING.format(path=path)
        file, line, code = raised
        return UNCHANGED_BESIDE_THE_ERROR.format(
            path=path, command=self.command.shown, file=file, line=line, code=code
        )

    def _shows_a_call_in_prose(self, text: str) -> bool:
        """A code block in the answer that is a call to an offered tool (prose around it: not run)."""
        return any(
            is_call_shaped(body) and any(m.group("name") in self.tools for m in _CALL_NAME.finditer(body))
            for body in (m.group("body") for m in _FENCED.finditer(text))
        )

    def _names_a_call(self, text: str) -> bool:
        """The answer is a tool call in a form that is not one (``<tool name="…">``, broken JSON):
        markup from its first character, naming an offered tool."""
        if not text.lstrip().startswith(("<", "{", "[", "`")):  # prose first: an example, or talk
            return False
        return any(m.group("name") in self.tools for m in _CALL_NAME.finditer(text))

    def check_due(self) -> bool:
        """The user named a command, files changed since it last ran, and it may run."""
        return (
            self.command is not None
            and self.can_run_commands
            and not self.command_refused
            and self.changed_since_run
        )


def nudge_message(instruction: str) -> Message:
    """The instruction as the user message appended to the history (marked: Shiro wrote it)."""
    return {"role": "user", "content": instruction, NUDGE_MARK_KEY: NUDGE_MARK}


def reply_text(message: Message | None) -> str:
    """The text parts of a model message, joined ('' for none)."""
    if message is None:
        return ""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "".join(str(p.get("text", "")) for p in content if p.get("type") == "text")


def _output_text(part: dict[str, Any]) -> str:
    value = part.get("output", {}).get("value", "")
    return value if isinstance(value, str) else json.dumps(value)


def _code_blocks(text: str) -> list[list[str]]:
    """The stripped non-blank lines of each code block of more than one line."""
    blocks = (
        [line.strip() for line in m.group("body").splitlines() if line.strip()]
        for m in _FENCED.finditer(text)
    )
    return [block for block in blocks if len(block) > 1]


def _named_paths(text: str) -> list[str]:
    return list(dict.fromkeys(m.group(0).strip("`'\"") for m in _PATH.finditer(text)))


def _listed_file(before: str) -> str | None:
    """The one file the text before a block names as the block's: on the line right before it, else
    ("Files to change: todo.py" then "New content:") anywhere since the previous block."""
    lines = before.rstrip().splitlines()
    for text in (lines[-1] if lines else "", before):
        named = _named_paths(text)
        if named:
            return named[0] if len(named) == 1 else None
    return None


def _is_the_file(block: set[str], file_lines: set[str]) -> bool:
    """A code block's stripped lines are the file's, blank lines aside: the file as it already is."""
    return bool(block) and block == file_lines - {""}


def _file_lines(workspace: Roots, path: str) -> set[str] | None:
    """The stripped lines of an existing workspace file, None when there is none (or it is not text)."""
    try:
        with open_text(workspace, path) as f:
            return {line.strip() for line in f.read(MAX_QUOTED_FILE).splitlines()}
    except (ToolError, OSError):
        return None


def raised_at(output: str, workspace: Roots) -> tuple[str, int, str] | None:
    """(file, line, code) of the last frame of a Python traceback in ``output`` that lies in the
    workspace: where the error was raised in the user's code. None when there is none."""
    for match in reversed(list(_RAISED_AT.finditer(output))):
        try:
            path = relative_posix(workspace, resolve_in_workspace(workspace, match.group("path")))
            with open_text(workspace, path) as f:
                lines = f.read(MAX_QUOTED_FILE).splitlines()
        except (ToolError, OSError):
            continue
        number = int(match.group("line"))
        if 0 < number <= len(lines) and lines[number - 1].strip():
            return path, number, lines[number - 1].strip()
    return None


def announces_a_step(text: str) -> bool:
    """The answer ends by announcing a step (its last sentence, code blocks aside)."""
    body = _FENCED.sub("", text).strip()
    if not body:
        return False
    sentences = [s for s in re.split(r"(?<=[.!?:])\s+", body.splitlines()[-1].strip()) if s]
    return bool(sentences) and bool(_ANNOUNCES.match(sentences[-1]))

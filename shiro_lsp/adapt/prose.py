"""The rules that read the user's own prose: each parses what the user typed this turn (attached
documents left out, :func:`user_words`), never a tool's output or a file, and each lives here once,
so it can be found, measured and deleted. They guess at intent from wording, so every one is a
candidate for the eval's paraphrase rows (``SHIRO_ADAPT_OFF``) before it earns its keep.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from shiro_lsp.messages import without_attachments

# A command's word that is a path: it holds a slash, or a dot with more of the name after it ("fails."
# ends a sentence: prose after the command, never part of it).
_PATH_WORD = r"(?:[\w.-]*/[\w./-]*|[\w/-]*\.[\w-][\w./-]*)"
_COMMAND = re.compile(
    r"(?<![\w/.-])(?P<command>(?:python3?|node|bash|sh|npm|npx|yarn|pnpm|pytest|cargo|ruby|deno|uv)"
    rf"(?:[ \t]+(?:-m[ \t]+[\w.]+|-[\w-]+|{_PATH_WORD}|test|run|\d+))*)"
    r"|(?<![\w/.-])(?P<script>\.?/?[\w./-]+\.(?:sh|py|js|mjs|ts|rb))\b"
)
_RUNNERS = frozenset({"python", "python3", "node", "bash", "sh", "ruby", "deno", "uv"})
# After the command, what it does now ("... fails", "... prints 4"): the message says it checks the
# work. Not a command it only mentions ("to start it, type: ...").
_AFTER_THE_COMMAND = r"^(?:\s+[\w\"'-]+)?\s+(?:{verbs})\b"
_FAILS = "fails|crashes|errors|raises"
_SAYS_IT_FAILS = re.compile(_AFTER_THE_COMMAND.format(verbs=_FAILS), re.I)
_SAYS_WHAT_IT_DOES = re.compile(
    _AFTER_THE_COMMAND.format(verbs=_FAILS + "|prints|outputs|exits|returns|gives|shows|should"), re.I
)
_TEST_FILE = re.compile(r"(?<![\w/.-])(?P<file>(?:[\w.-]+/)*(?:test_\w+|\w+_test)\.py)\b")
_REFERENCE = re.compile(r"(?<![\w#&/])#\d{2,}\b")
_CHANGE_VERB = re.compile(
    r"\b(?:fix|chang|add|implement|updat|writ|mak|creat|remov|delet|renam|refactor|edit|replac|correct|"
    r"repair|treat|convert|modif|mov|sort out|put|insert|append|apply)\w*",
    re.I,
)
_TO_EXPLAIN = re.compile(r"\b(?:explain|describe|summari[sz]e|tell me|walk me through)\b", re.I)


def user_words(text: str) -> str:
    """What the user typed: the prompt without its attached documents (``<context>`` blocks)."""
    return without_attachments(text)


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

    @property
    def runs_a_file(self) -> bool:
        """It runs a named file or module (``python3 x.py``, ``bash t.sh``, ``python3 -m pytest``;
        not ``npm test``, nor a tool name read from prose)."""
        words = self.shown.split()
        return self.key != self.shown or "-m" in words or words[0].startswith(("./", "/"))


def named_command(words: str) -> NamedCommand | None:
    """Parses the user's prose: the command it names to check the work with (``python3 x.py``,
    ``run check.sh``, ``npm test``), or None. Only a command or a script path counts, never prose;
    what follows it says whether the user tells to run it or says what it does now."""
    for match in _COMMAND.finditer(words):
        command = match.group("command")
        if command is not None:
            command = command.rstrip(".")  # the sentence's full stop
            parts = command.split()
            if parts[0] in _RUNNERS and len(parts) == 1:
                continue  # "python" alone is a language, not a command
            script = next((w for w in parts[1:] if "." in w or "/" in w), None)
            told = _told_to_run(words, match.start())
            after = words[match.end() :]
            checks = told or bool(_SAYS_WHAT_IT_DOES.match(after))
            return NamedCommand(command, script or command, checks, told or bool(_SAYS_IT_FAILS.match(after)))
        script = match.group("script")
        if script is not None and _told_to_run(words, match.start()):
            return NamedCommand(script, script.lstrip("./"), True, True)
    return None


def _told_to_run(words: str, at: int) -> bool:
    """A bare script path counts when the user says to run it (``run check.sh``, ``./check.sh``)."""
    before = words[max(0, at - 12) : at].lower()
    return words[at:].startswith("./") or bool(re.search(r"\b(?:run|execute|running)\s+`?$", before))


def named_test_file(words: str) -> str | None:
    """Parses the user's prose: the pytest file it names (``test_x.py``, ``x_test.py``), or None."""
    match = _TEST_FILE.search(words)
    return match.group("file") if match else None


def references(words: str) -> list[str]:
    """Parses the user's prose: the issue or ticket numbers it names (``#123``), in order, once each."""
    return list(dict.fromkeys(_REFERENCE.findall(words)))


def is_question(words: str) -> bool:
    """Parses the user's prose: the message asks something (it ends with a question mark)."""
    return words.rstrip().endswith("?")


def requests_a_change(words: str) -> bool:
    """Parses the user's prose: the message asks, in so many words, for files to change: it names a
    change (a verb of changing) and is neither a question nor a request to explain."""
    return bool(_CHANGE_VERB.search(words)) and not (is_question(words) or _TO_EXPLAIN.search(words))


def asks_for_change(words: str) -> bool:
    """Parses the user's prose: whether the message may ask for files to change. Only one that names
    no change (no verb of changing) and asks something or asks to explain does not: it is answered in
    words, and a reply that shows code for it is not work left undone. Any other message may."""
    if _CHANGE_VERB.search(words):
        return True
    return not (is_question(words) or _TO_EXPLAIN.search(words))

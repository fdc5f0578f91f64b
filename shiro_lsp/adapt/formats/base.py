"""A reply format: how the tools are put to a model and how its reply is read back.

Every format answers the same four questions, so the turn loop asks them without knowing which
format it runs: what the system prompt says of the tools (:meth:`ReplyFormat.tools_in_prompt`), what
of a streaming reply may be shown yet (:meth:`ReplyFormat.hold`), which calls a reply that made no
native call holds (:meth:`ReplyFormat.parse`), and how the history goes back on the wire
(:meth:`ReplyFormat.render`). A format can also change during a turn: a model that makes a native
call is read as native from then on (:meth:`ReplyFormat.after_native_call`), and a server that
refuses native tools gets them described in the prompt (:meth:`ReplyFormat.when_tools_refused`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from shiro_lsp.config import ToolCallFormat
from shiro_lsp.fs.secrets import Redactor
from shiro_lsp.messages import Message
from shiro_lsp.tools.base import JsonObject, ToolSpec


@dataclass(frozen=True)
class TextCall:
    """A call read from the model's text."""

    name: str
    input: JsonObject
    offered: bool = True
    """False: a tool Shiro has but did not offer this step; the call is answered with an error."""


class Hold(Protocol):
    """What of a streaming reply is shown now (``text_calls.TextHold``)."""

    def feed(self, delta: str) -> str:
        """What to show of ``delta`` now."""
        ...

    def drop(self) -> None:
        """What is held was read as calls: it is never shown."""
        ...

    def release(self) -> str:
        """Everything held, to show now."""
        ...


@dataclass(frozen=True)
class Listing:
    """A file written out whole in a reply (``whole_file.py``)."""

    path: str
    content: str
    """The file's whole new content."""
    span: tuple[int, int] = (0, 0)
    """Where the listing (its path line included) is in the reply."""


WRITTEN_AS_KEY = "shiroWrittenAs"
"""On a reply whose files Shiro wrote from its listings: the text the model wrote."""


@dataclass(frozen=True)
class ReplyContext:
    """What reading a reply may look at."""

    tools: Mapping[str, ToolSpec]
    """The tools a call written as text may name and run: the offered and the withheld ones."""
    unoffered: Mapping[str, ToolSpec]
    """Registered tools not offered: a call to one is read, and answered with an error."""
    history: Sequence[Message]
    """The conversation so far: a call copied out of a tool's output is that output, not a call."""
    workspace: Path | Sequence[Path]
    user_words: str = ""
    """What the user typed this turn (attached documents left out)."""
    instructions: str = ""
    """The step's system prompt (project instruction files included): text the model was shown, so a
    call or a file that reproduces it is an echo (``echoes.py``)."""
    redactor: Redactor = field(default_factory=Redactor)
    """The secrets cut out of what the model was shown (a file written out as shown changes nothing)."""


@dataclass(frozen=True)
class ParsedReply:
    """The calls a reply holds, and what it says besides them."""

    calls: list[TextCall] = field(default_factory=list)
    prose: str = ""
    notice: str = ""
    """What the user is told of how the reply was read ('' for nothing)."""
    written_as: str | None = None
    """The reply as the model wrote it, kept when files were written from it (``as_written``)."""
    wrote_out: bool = False
    """The calls are files the reply wrote out."""
    answered_with_files: bool = False
    """The reply wrote files out and said what it did: the turn's answer."""
    declined: bool = False
    """Calls were read and not taken (echoes of text the model was shown): the reply is text, by the rules."""

    def carried(self) -> dict[str, str]:
        """What the assistant message carries besides its parts."""
        return {WRITTEN_AS_KEY: self.written_as} if self.written_as is not None else {}


class ReplyFormat(ABC):
    """How a model calls tools and changes files, as the turn loop sees it."""

    name: ToolCallFormat
    """What the runtime remembers per endpoint and model (``toolCallFormat``)."""
    tools_in_prompt = False
    """The tools are described in the system prompt, not sent as ``tools``."""
    writes_out = False
    """The model writes files out in its reply instead of calling the file tools."""

    def withheld(self, offered: Collection[str]) -> frozenset[str]:
        """Offered tools the model is not told of (their calls still run)."""
        return frozenset()

    def describes_tools(self, shown_whole: bool) -> bool:
        """Whether the tools are described at all when the model is shown the whole workspace with
        the message (``shown_whole``) or not; their calls still run either way."""
        return True

    @abstractmethod
    def hold(self) -> Hold:
        """What of a streaming reply to hold back until the step ends."""

    @abstractmethod
    async def parse(self, text: str, context: ReplyContext) -> ParsedReply | None:
        """The calls a reply that made no native call holds, or None: it is text."""

    @abstractmethod
    def render(self, messages: list[Message]) -> list[Message]:
        """The history as this format sends it."""

    def after_native_call(self) -> ReplyFormat:
        """The format for the rest of the turn once the model made a native call."""
        return self

    def when_tools_refused(self) -> ReplyFormat | None:
        """The format to use when the server refuses native tools (None: the error stands)."""
        return None

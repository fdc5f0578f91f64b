"""The echo rule: a call or a file listing read from a model's text is never run or written when it
reproduces text the model was shown, this turn or earlier.

What the model was shown and did not write itself: the workspace view, every tool's output (a file it
read, a command's output), the documents attached to a prompt, the system prompt (project instruction
files) — everything but the user's own typed words and Shiro's own instructions. A README that holds a
bash call, a "path line + fenced block" or a ``read_file`` of either, echoed by a small model, is that
text echoed, not the model's intent; ``--yolo`` changes who is asked, never this rule.

"Reproduces", in every form the readers (``text_calls``, ``whole_file``, ``search_replace``) accept:
the reply's calls as written (whitespace aside); a call whose tool name and every argument value one
shown text holds (as written or JSON-escaped: a tool's output may quote it as JSON); a file change
whose written text (a content, a SEARCH/REPLACE block's two sides) one shown text holds with its path;
a listing whose block one shown text holds together with its path. ``read_file``'s line numbers are
taken off before comparing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from shiro_lsp.adapt.formats.base import Listing, TextCall
from shiro_lsp.adapt.view import VIEW_KEY
from shiro_lsp.messages import Message
from shiro_lsp.providers.wire import parts_of, tool_output_text

_ATTACHED = re.compile(r'<context label="[^"\n]*"[^>\n]*>\n([\s\S]*?)\n</context>')
"""A document attached to a prompt (agent/attachments.py writes them)."""
_LINE_NUMBER = re.compile(r"^ *\d+\t", re.M)
"""read_file's numbering (``cat -n``)."""
_FENCE_OPEN = re.compile(r"^[^\n]*?```[^\n]*\n", re.M)
_SPACE = re.compile(r"\s+")
MIN_ECHO_CHARS = 8
"""A block shorter than this (whitespace aside) is too common to be an echo of anything."""


def unspaced(text: str) -> str:
    return _SPACE.sub("", text)


@dataclass(frozen=True)
class Shown:
    """What the model was shown that it did not write and the user did not type, each text with its
    whitespace taken out (whitespace is what an echo changes first)."""

    texts: tuple[str, ...]

    @classmethod
    def of(cls, messages: Iterable[Message], system: str = "") -> Shown:
        found = [system] if system else []
        for message in messages:
            role = message.get("role")
            if role == "tool":
                found += [
                    _LINE_NUMBER.sub("", tool_output_text(part))
                    for part in parts_of(message)
                    if part.get("type") in ("tool-result", "tool-error")
                ]
            elif role == "user":
                view = message.get(VIEW_KEY)
                if isinstance(view, str):
                    found.append(view)
                content = message.get("content")
                if isinstance(content, str):
                    found += _ATTACHED.findall(content)
        return cls(tuple(unspaced(text) for text in found if text.strip()))

    def holds(self, pieces: Sequence[str], any_of: Sequence[str] = ()) -> bool:
        """Whether one shown text holds every piece (as written or JSON-escaped) and, with ``any_of``,
        one of those too."""
        forms = [_forms(piece) for piece in pieces]
        marks = [unspaced(mark) for mark in any_of]
        return any(
            all(any(form in text for form in piece) for piece in forms)
            and (not marks or any(mark in text for mark in marks))
            for text in self.texts
        )


def _forms(piece: str) -> tuple[str, ...]:
    escaped = json.dumps(piece, ensure_ascii=False)[1:-1]
    return tuple({unspaced(piece), unspaced(escaped), unspaced(json.dumps(escaped)[1:-1])})


def _changes_something(path: str, content: str) -> bool:
    return True


def echoes(
    reply: str,
    calls: Sequence[TextCall],
    listings: Sequence[Listing],
    shown: Shown,
    changes: Callable[[str, str], bool] = _changes_something,
) -> bool:
    """Whether the calls and listings read from ``reply`` reproduce text the model was shown (the
    rule above). The one check every text reader's result passes before it runs or is written.

    ``changes(path, content)``: whether writing ``content`` would change the file. A file written
    out as it already is (as the view showed it) reproduces its own text, harmlessly: it is left to
    the turn's handling of files that change nothing. Blocking when ``changes`` reads files."""
    if not shown.texts:
        return False
    if listings:  # their calls are the listings' own: judged by the block as the model wrote it
        return bool(echoed_listings(reply, listings, shown, changes))
    if _echoes_whole(reply, shown):
        return True
    return any(_echoes_call(call, shown) for call in calls)


def echoed_listings(
    reply: str,
    listings: Sequence[Listing],
    shown: Shown,
    changes: Callable[[str, str], bool] = _changes_something,
) -> list[Listing]:
    """The listings read from ``reply`` that reproduce text the model was shown (every one of them
    when the reply as a whole does). The others are the model's own: a small model that writes its
    change and copies the files it was shown beside it gets its change written, never the copies."""
    if not shown.texts:
        return []
    changing = [item for item in listings if changes(item.path, item.content)]
    if changing and _echoes_whole(reply, shown):
        return list(listings)
    return [item for item in changing if _echoes_listing(reply, item, shown)]


def _echoes_whole(reply: str, shown: Shown) -> bool:
    return len(unspaced(reply)) >= MIN_ECHO_CHARS and shown.holds([reply.strip()])


def _echoes_listing(reply: str, listing: Listing, shown: Shown) -> bool:
    block = _block(reply[listing.span[0] : listing.span[1]]) or listing.content
    return len(unspaced(block)) >= MIN_ECHO_CHARS and shown.holds([block], _path_forms(listing.path))


def _echoes_call(call: TextCall, shown: Shown) -> bool:
    values = _strings(call.input)
    if not values:
        return False
    path, written = call.input.get("path"), _written(call.input)
    if isinstance(path, str) and written:
        # what a file change writes (a whole content, a SEARCH/REPLACE block's two sides) and its path
        # in one shown text, whatever the call was named there
        return shown.holds(written, _path_forms(path))
    return shown.holds(values, _name_forms(call.name))


def _written(input: dict[str, Any]) -> list[str]:
    """The text a file-changing call writes, with what it replaces (none for a deletion: a SEARCH
    block with an empty REPLACE only removes lines)."""
    content = input.get("content")
    if isinstance(content, str):
        return [content] if content.strip() else []
    new = input.get("newString", input.get("new_string"))
    old = input.get("oldString", input.get("old_string"))
    if isinstance(new, str) and new.strip() and isinstance(old, str):
        return [old, new]
    return []


def _name_forms(name: str) -> tuple[str, ...]:
    return (
        f'"name":"{name}"',
        f'\\"name\\":\\"{name}\\"',
        f'"function":"{name}"',
        f'name="{name}"',
        f"<{name}>",
    )


def _path_forms(path: str) -> tuple[str, ...]:
    name = path.rsplit("/", 1)[-1]
    return (path, name) if name != path else (path,)


def _block(listing: str) -> str:
    """The body of the fenced block a listing (its path line included) holds."""
    opened = _FENCE_OPEN.search(listing)  # the path line before it is not the block's
    body = listing[opened.end() :] if opened else listing
    return body[: body.rfind("```")] if "```" in body else body


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []

"""Documents attached to a prompt, gated by the secrets policy before anything reaches the model.

Every front door writes an attached document the same way: a ``<context label="…" source="URI">``
block in the prompt's text (the VS Code extension for a selection or a whole editor, ACP for an
editor's embedded or linked resource). ``source`` says which document the text came from. Before
the turn starts, each block with a source passes :func:`shiro_lsp.fs.secrets.attachment_refusal`:
a secrets file, a file outside the workspace folders or in the state root keeps its label (the
user sees the chip) but its text is replaced by the reason. The ``source`` attribute itself (an
absolute path) is dropped from what the model, the session file and the history keep.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from shiro_lsp.fs.jail import Roots, roots_of
from shiro_lsp.fs.secrets import attachment_refusal

BLOCK = re.compile(r'<context label="([^"\n]*)" source="([^"\n]*)">\n([\s\S]*?)\n</context>')
"""A block with a source (the extension's ``attachments.ts`` writes the same shape)."""

ANY_BLOCK = re.compile(r'\n*<context label="[^"\n]*"(?: source="[^"\n]*")?>\n[\s\S]*?\n</context>')
"""A block with or without a source (what ``split_attachments`` takes off the end of a prompt)."""

REFUSED_NOTICE = "Not sent to the model: {reason}"


@dataclass(frozen=True)
class Gated:
    text: str
    """The prompt as the model may read it."""
    refusals: tuple[str, ...] = ()
    """Why each refused attachment was held back, for the user."""


def context_block(label: str, text: str, source: str | None = None) -> str:
    """One attachment as the prompt carries it (``source`` only on the way to the gate)."""
    clean = label.replace('"', "'").replace("\n", " ")
    attribute = f' source="{source.replace(chr(34), "%22").replace(chr(10), "%0A")}"' if source else ""
    # the block ends only at its own end: a line "</context>" in the text is escaped
    body = ("\n" + text.rstrip("\n")).replace("\n</context>", "\n<\\/context>")[1:]
    return f'<context label="{clean}"{attribute}>\n{body}\n</context>'


def has_sources(text: str) -> bool:
    return BLOCK.search(text) is not None


def gate_attachments(text: str, workspace: Roots) -> Gated:
    """``text`` with every sourced block checked; blocking (``realpath``): call it in a thread."""
    roots = roots_of(workspace)
    refusals: list[str] = []

    def check(match: re.Match[str]) -> str:
        label, source, body = match.group(1), match.group(2), match.group(3)
        reason = attachment_refusal(roots, source, label)
        if reason is None:
            return context_block(label, body)
        refusals.append(reason)
        return context_block(label, f"[not attached: {reason}]")

    return Gated(BLOCK.sub(check, text), tuple(refusals))


def split_attachments(text: str) -> tuple[str, str]:
    """The prompt as typed, and the context blocks that trail it (as they were, '' for none)."""
    end = len(text)
    for match in reversed(list(ANY_BLOCK.finditer(text))):
        if match.end() != end:
            break
        end = match.start()
    return text[:end], text[end:]

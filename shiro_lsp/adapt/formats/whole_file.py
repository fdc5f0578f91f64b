"""Files a small model writes out in its reply instead of calling a tool: the edit format small models
get right (Aider's "whole file" format, which the same 1.5B model follows where it botches JSON).

In a small window the compact prompt asks for it: the file's path alone on a line, then the whole new
content in a fenced block. A reply may hold several. Each becomes a ``write_file`` call read from text
(``origin="text"``: the same approvals and limits as any text call, adapt/formats/text_calls.py). The forms the
model falls into on its own are read too:

- the path as the block's first line, inside the fence, or there as a comment naming a file of the
  workspace (``# src/app.py``; that line is a label, not content);
- a path that is no file of the workspace, as the one file whose path ends with it (``pkg/util.py``
  for ``src/pkg/util.py``), else as written;
- for a file that exists: the path only in the sentence that introduces the block ("the corrected
  `mean.py`:"), else the one file of the user's message, else the one non-empty file the model was
  shown, that the block fits (or, named alone on the line right before it, rewrites whole); when the
  sentence names a file that does not take the block, the one file that defines every function and
  class the block defines, when the files it names all exist (the model named the script it talks
  about, not where the code lives);
- for a file that does not exist yet: the path in the sentence that introduces the block (as the
  user wrote it or by its absolute path in the workspace), when the user's message names that file
  too (the file the user asked for);
- a fragment: functions, classes or methods of the file rewritten (Python, JavaScript, TypeScript).
  Each replaces the file's definition of that name, found by its definition (adapt/definitions.py),
  and the rest of the file stays. A Python block that imports names the file defined and accounts
  for all its other names is the file rewritten with those names moved out, not a fragment. In a
  file of another language, a fragment replaces the block of the file that starts with its first
  line, when exactly one line of the file is that line.

Nothing is ever added to a file by inference: a fragment that defines only things the file does not
have is not a write (the reply shows it; the model is asked to write the file out).

Never read as a write: a block introduced as an example, a block with elided lines (``...``,
"rest of the code"), a shell or output block for a file that is not a script, a call-shaped JSON
block, a block that is the file unchanged, and a block whose file cannot be told.
"""

from __future__ import annotations

import asyncio
import mimetypes
import re
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path, PurePosixPath

from shiro_lsp.adapt.definitions import (
    defined_names,
    drops_module_lines,
    has_grammar,
    moves_names_out,
    place_definitions,
    rewrites_only_its_own,
)
from shiro_lsp.adapt.formats.base import Hold, Listing, ParsedReply, ReplyContext, ReplyFormat, TextCall
from shiro_lsp.adapt.formats.echoes import Shown, echoed_listings, echoes
from shiro_lsp.adapt.formats.search_replace import block_calls, has_edit_blocks
from shiro_lsp.adapt.formats.text_calls import TextCalls, is_call_shaped
from shiro_lsp.adapt.repo_map import repo_map_of
from shiro_lsp.adapt.view import overview
from shiro_lsp.bounded import NOT_PARSED, json_value, parses_as_python
from shiro_lsp.config import ToolCallFormat
from shiro_lsp.errors import ToolError
from shiro_lsp.fs.reader import read_text
from shiro_lsp.fs.secrets import HiddenSecretWrite, Redactor, with_hidden_values
from shiro_lsp.messages import Message
from shiro_lsp.tools.files import open_text

_BLOCK = re.compile(
    r"^(?P<indent>[ \t]{0,8})(?P<fence>`{3,})[ \t]*(?P<lang>[\w+#.-]*)[^\n]*\n(?P<body>.*?)"
    r"^(?P=indent)(?P=fence)[ \t]*$",
    re.S | re.M,
)
"""A fenced block; indented as a whole under a list item ("- `app.py`:"), its lines are read without
that indent."""
_INNER_FENCE = re.compile(r"^(?P<fence>`{3,})[ \t]*(?P<lang>[^\s`]*)[^\n`]*\n?$")
MARKDOWN_LANGS = frozenset({"markdown", "md"})
_PATH_LINE = re.compile(
    r"^[\s#*>`-]*(?:(?:file(?:name)?|path)\s*:\s*)?[`*'\"]*(?P<path>[\w.-]*[\w-](?:/[\w.-]+)*\.[A-Za-z0-9]{1,8}"
    r"|(?:[\w.-]+/)*(?:Makefile|Dockerfile|README))[`*'\"]*\s*:?\s*[*`]*\s*$",
    re.I,
)
_COMMENT_LABEL = re.compile(
    r"^\s*(?:#|//)\s*[`'\"]?(?P<path>[\w.-]*[\w-](?:/[\w.-]+)*\.[A-Za-z0-9]{1,8})[`'\"]?\s*$"
)
"""A first line that is a comment holding a file's path and nothing else (``# src/app.py``)."""
_NAMED = re.compile(r"(?<![\w/.-])[\w./-]*\w\.[A-Za-z][A-Za-z0-9]{0,7}\b")
_ELIDED = re.compile(
    r"^\s*(?:#|//|/\*|<!--|--)?\s*(?:\.\.\.|…)\s*(?:\*/|-->)?\s*$"
    r"|(?:\.\.\.|…)\s*(?:rest|existing|remaining|other|unchanged|same)"
    r"|\b(?:rest of (?:the )?(?:code|file|function)|existing code|remaining code|code unchanged)\b",
    re.I | re.M,
)
_EXAMPLE = re.compile(
    r"\b(?:for (?:example|instance)|e\.g\.|an? (?:example|sample)\b|would look like|could look like)", re.I
)
_OUTPUT_LANGS = frozenset({"console", "terminal", "output", "text", "txt", "plaintext", "log"})
_SHELL_LANGS = frozenset({"bash", "sh", "shell", "zsh"})
_SCRIPT_SUFFIXES = frozenset({".sh", ".bash", ".zsh"})
_CLOSERS = frozenset({"}", "};", "});", ")", "]", "end", "fi", "done", "esac"})
WHOLE_SHARE = 0.7
"""A block at least this long, keeping this share of a file's non-blank lines, is the file rewritten."""
MAX_FILE_CHARS = 200_000
MAX_SHOWN_FILES = 40
MAX_DEFINER_FILES = 3
CONCLUSION_WORDS = 4
"""Words of prose after the last file a reply writes out that make it the turn's answer."""


WRITTEN_OUT = frozenset({"write_file", "edit_file"})
"""The file tools whose work a model that writes files out does in its reply instead."""
WITHHELD_WHEN_WRITING_OUT = WRITTEN_OUT | {"todo_write"}
"""What a small model that writes calls as text is not told of: it writes files out instead of calling
the file tools, and the task list (a 1.5B model re-sent one task list until it was refused)."""

WRITE_IT_OUT = (
    "Not run: write the file out instead, its path alone on one line, then its whole new content in a "
    "fenced code block."
)
_LITERAL_WRITE = re.compile(
    r"^\s*(?:(?:echo|printf)\b[^|;&]*?>{1,2}\s*[\w./-]+\s*$|cat\s*>{1,2}\s*[\w./-]+\s*<<)", re.S
)


def writes_literal_file(tool: str, inputs: object) -> bool:
    """A bash call whose only work is to put literal text into a file (``echo … > f``, ``cat > f <<``):
    where a small model writes files out, that is the way it writes them, checked and reviewable."""
    command = inputs.get("command") if isinstance(inputs, dict) else None
    return tool == "bash" and isinstance(command, str) and bool(_LITERAL_WRITE.match(command))


@dataclass(frozen=True)
class _Block:
    lang: str
    body: str
    before: str
    """The reply's text between the previous block and this one."""
    start: int
    """Where the block starts in the reply, or, when its path line was moved from a block before it,
    that many characters after (a listing's span starts its path line's length before ``start``)."""
    end: int


def file_listings(
    text: str, workspace: Path | Sequence[Path], prompt: str, files: Sequence[str] = ()
) -> list[Listing]:
    """The files ``text`` writes out (see the module docstring), in order. ``files``: the workspace's
    files the model was shown, where a block with no file named near it may belong to exactly one.
    Blocking: small reads."""
    listings: list[Listing] = []
    for block in _blocks(text):
        if not _may_be_a_file(block):
            continue
        listing = _listing(block, workspace, prompt) or _only_fit(block, workspace, files)
        if listing is not None and all(earlier.path != listing.path for earlier in listings):
            listings.append(listing)
    return listings


def _fenced(text: str) -> Iterator[tuple[str, str, int, int]]:
    """Each fenced block of ``text``: (language, body without its indent, start, end). A Markdown
    block reads the fences inside it as nested: one opened with a language closes with the next bare
    fence, so a README's own examples, copied into a three-backtick block, do not end the README."""
    at = 0
    while (match := _BLOCK.search(text, at)) is not None:
        lang, end, body = match.group("lang").lower(), match.end(), match.group("body")
        if lang in MARKDOWN_LANGS:
            end, body = _nested_end(text, match) or (end, body)
        yield lang, _dedented(body, match.group("indent")), match.start(), end
        at = end


def _nested_end(text: str, match: re.Match[str]) -> tuple[int, str] | None:
    """Where a Markdown block ends when the fences inside it nest (its end, its body), or None when
    they do not balance."""
    fence, indent, depth = match.group("fence"), match.group("indent"), 0
    at = match.start("body")
    for line in text[at:].splitlines(keepends=True):
        inner = _INNER_FENCE.match(line.removeprefix(indent))
        if inner is not None and inner.group("fence") == fence:
            if inner.group("lang"):
                depth += 1
            elif depth == 0:
                return at + len(line.rstrip("\n")), text[match.start("body") : at]
            else:
                depth -= 1
        at += len(line)
    return None


def _blocks(text: str) -> list[_Block]:
    blocks: list[_Block] = []
    end = 0
    for lang, body, start, stop in _fenced(text):
        block = _Block(lang, body, text[end:start], start, stop)
        path_line = _fenced_path_line(blocks[-1], block) if blocks else None
        if path_line is not None:  # the path line goes from the block before to this one
            previous = blocks.pop()
            body = previous.body.rstrip("\n").rpartition("\n")[0]
            if body.strip():  # the block before, left unclosed, ends where the path line starts
                blocks.append(replace(previous, body=body + "\n"))
                block = replace(block, before=path_line, start=start + len(path_line))
            else:
                block = replace(
                    block, before=previous.before + path_line, start=previous.start + len(path_line)
                )
        blocks.append(block)
        end = stop
    return blocks


def _dedented(body: str, indent: str) -> str:
    if not indent:
        return body
    lines = body.splitlines(keepends=True)
    return "".join(line.removeprefix(indent) if line.strip() else line.lstrip(" \t") for line in lines)


def _fenced_path_line(previous: _Block, block: _Block) -> str | None:
    """The path line of a block that comes right after a block ending with a line that is nothing but
    a path: a 1.5B model fences the path line too, or forgets to close the block before it."""
    lines = previous.body.rstrip("\n").split("\n")
    match = _PATH_LINE.match(lines[-1].strip())
    if match is None or block.before.strip() or lines[-1].lstrip().startswith(("#", "-", ">")):
        return None
    return match.group("path") + "\n"


def _may_be_a_file(block: _Block) -> bool:
    """Not empty, nothing left out, not introduced as an example, not a tool call Shiro could not
    read (that is never a file's content), and not a list of paths no path line introduces (the files
    a reply is about to change, which are never written over the first of them)."""
    return not (
        not block.body.strip()
        or _ELIDED.search(block.body)
        or _EXAMPLE.search(block.before)
        or is_call_shaped(block.body)
        or (_lists_paths(block.body) and _path_line(block.before) is None)
    )


def _lists_paths(body: str) -> bool:
    """Two or more lines, each nothing but a file's path."""
    lines = _lines(body)
    return len(lines) >= 2 and all(is_path_line(line) for line in lines)


def _listing(block: _Block, workspace: Path | Sequence[Path], prompt: str) -> Listing | None:
    explicit = _path_line(block.before)
    inside = _path_inside(block.body, workspace) if explicit is None else None
    if inside is not None:  # the path as the block's first line, as small models also write it
        candidates, body = inside
        for candidate, matched in candidates:
            current = _read(workspace, candidate)
            content = block.body if _first_line_kept(block.body, current) else body
            if matched and not _surely_its(candidate, content, current):
                continue
            listing = _resolved(
                replace(block, body=content), candidate, current, explicit=True, adjacent=True
            )
            if listing is not None:
                return replace(listing, span=(block.start, block.end))
        return None
    if explicit is not None:
        path, line_length = explicit
        adjacent = not block.before.rstrip(" \t").endswith("\n\n")  # no blank line between path and block
        for candidate, matched in _with_matches([path], workspace):
            current = _read(workspace, candidate)
            if matched and not _surely_its(candidate, block.body, current):
                continue
            listing = _resolved(block, candidate, current, explicit=True, adjacent=adjacent)
            if listing is not None:
                return replace(listing, span=(block.start - line_length, block.end))
        return None
    sole = _sole_path_named(block.before, workspace)
    soles = _with_matches([sole], workspace) if sole else []
    for path, matched in soles or _with_matches(_nearby_paths(block.before, prompt, workspace), workspace):
        current = _read(workspace, path)
        if matched and not _surely_its(path, block.body, current):
            continue
        asked_for = current is None and _asked_to_create(workspace, path, block.before, prompt)
        if current is not None or asked_for:
            rewrite = (
                (path, matched) in soles and current is not None and _reads_as(path, block.body, current)
            )
            listing = _resolved(block, path, current, explicit=asked_for, adjacent=rewrite)
            if listing is not None:
                return replace(listing, span=(block.start, block.end))
    return None


def _surely_its(path: str, content: str, current: str | None) -> bool:
    """Whether a block is surely the file at ``path``, which the model named by a shorter path: it
    rewrites the file whole, or changes only definitions the file has. Never is a block that adds
    to a file merged into one the model did not name in full (it may be a new file's)."""
    return current is not None and (
        _is_whole(content, current) or rewrites_only_its_own(path, current, content)
    )


def _with_matches(paths: Sequence[str], workspace: Path | Sequence[Path]) -> list[tuple[str, bool]]:
    """``paths``, each that is no file of the workspace preceded by the one file whose path ends with
    it (marked True: a match): a model drops a leading folder (``pkg/util.py`` for ``src/pkg/util.py``)
    or names a file by its name alone (Aider matches names to its files so). The path as written stays
    after it, for a file to create."""
    out: list[tuple[str, bool]] = []
    for path in paths:
        match = None if _is_file(workspace, path) else _ending_with(workspace, path)
        out += [(match, True), (path, False)] if match else [(path, False)]
    return list(dict.fromkeys(out))


def _roots(workspace: Path | Sequence[Path]) -> list[Path]:
    return [workspace] if isinstance(workspace, Path) else list(workspace)


def _session_root(workspace: Path | Sequence[Path]) -> Path:
    """The session's root: the one folder, or the first of a multi-root workspace."""
    return workspace if isinstance(workspace, Path) else workspace[0]


def _is_file(workspace: Path | Sequence[Path], path: str) -> bool:
    """A file of a workspace folder, named by a path inside it (never a way to ask about others)."""
    roots = _roots(workspace)
    return _inside(path) and any((root / path).is_file() for root in roots)


def _inside(path: str) -> bool:
    return not path.startswith("/") and ".." not in path.split("/")


def _ending_with(workspace: Path | Sequence[Path], path: str) -> str | None:
    """The one file of the session's root (the map's walk: ignore files honoured, secrets left out)
    whose path ends with ``path`` at a folder boundary, or None when none or several do."""
    if not _inside(path):
        return None
    root = _session_root(workspace)
    files = [rel for rel in repo_map_of(root).scan().files if rel.endswith("/" + path)]
    return files[0] if len(files) == 1 else None


def _sole_path_named(before: str, workspace: Path | Sequence[Path]) -> str | None:
    """The file the line right before the block names, when it names exactly one ("Here is the
    updated `main.py`:"); a line naming several is a list of the files to change."""
    lines = before.rstrip().splitlines()
    named = set(_named(lines[-1], workspace)) if lines else set()
    return named.pop() if len(named) == 1 else None


def _reads_as(path: str, content: str, current: str) -> bool:
    """``content`` can be ``path``'s new text, not output about it (a traceback quotes its lines):
    Python that parses, JSON that loads, else a text sharing a line with the file."""
    if "Traceback (most recent call last)" in content:
        return False
    suffix = Path(path).suffix
    if suffix == ".py":
        return parses_as_python(content)
    if suffix == ".json":
        return json_value(content) is not NOT_PARSED
    return bool(set(_lines(content)) & {line for line in _lines(current) if len(line.strip()) > 3})


def _asked_to_create(workspace: Path | Sequence[Path], path: str, before: str, prompt: str) -> bool:
    """A file that does not exist yet, named by the user's message and by the sentence that introduces
    the block ("The new content of `sizes.sh` is:"): the file the user asked for."""
    named_near = path in _named(_last_paragraph(before), workspace)  # by its absolute path too
    named_by_user = path in _named(prompt, workspace)
    roots = _roots(workspace)
    absent = not any((root / path).exists() for root in roots)
    return named_near and named_by_user and absent and not _qualified_name(path, workspace)


def _qualified_name(path: str, workspace: Path | Sequence[Path]) -> bool:
    """A dotted name in code (``shapes.Circle``: a module's class), not a file's name: its "suffix"
    has a capital letter, no file type has it and no file of the workspace ends with it."""
    suffix = PurePosixPath(path).suffix
    if suffix == suffix.lower() or mimetypes.guess_type(f"x{suffix}")[0] is not None:
        return False
    root = _session_root(workspace)
    return not any(rel.endswith(suffix) for rel in repo_map_of(root).scan().files)


def _only_fit(block: _Block, workspace: Path | Sequence[Path], files: Sequence[str]) -> Listing | None:
    """The block as the one file it rewrites or splices into, when no file is named near it: of
    the files shown, and of those that define what the block defines (the repository map's). When
    the sentence before it names files of the workspace that did not take it, only a file that
    already defines every definition of the block may: the model named the file it was talking about,
    not where the code lives ("the bug in `main.py` is that `average` ..."). A sentence naming a file
    that does not exist gives the block to that new file, never to another."""
    if _path_line(block.before) is not None:
        return None
    if named := _named(_last_paragraph(block.before), workspace):
        return _sole_definer(block, workspace) if all(_is_file(workspace, p) for p in named) else None
    candidates = dict.fromkeys([*files[:MAX_SHOWN_FILES], *_definers(block, workspace)])
    fits = [
        listing
        for path in candidates
        if (current := _read(workspace, path))  # an empty file would take any block
        and (listing := _resolved(block, path, current, explicit=False)) is not None
    ]
    return replace(fits[0], span=(block.start, block.end)) if len(fits) == 1 else None


def _sole_definer(block: _Block, workspace: Path | Sequence[Path]) -> Listing | None:
    """The block as the one file that defines every function and class it defines, placed there."""
    owners = [
        (path, current)
        for path in _definers(block, workspace)
        if (current := _read(workspace, path)) and rewrites_only_its_own(path, current, block.body)
    ]
    if len(owners) != 1:
        return None
    listing = _resolved(block, *owners[0], explicit=False)
    return replace(listing, span=(block.start, block.end)) if listing is not None else None


def _definers(block: _Block, workspace: Path | Sequence[Path]) -> list[str]:
    """The files that define the functions and classes the block defines, when few do."""
    names = defined_names(block.body, block.lang)
    if not names:
        return []
    root = _session_root(workspace)
    scan = repo_map_of(root).scan()
    found = sorted({rel for name in names for rel, _ in scan.definers(name)})
    return found if len(found) <= MAX_DEFINER_FILES else []


def _resolved(
    block: _Block, path: str, current: str | None, *, explicit: bool, adjacent: bool = False
) -> Listing | None:
    """The listing of ``block`` as ``path``'s new content (``current``: its content now, None: new).
    ``adjacent``: the path is on the line right before the block, or its first line (Aider's form)."""
    if not _language_fits(block.lang, path):
        return None
    content = block.body
    if current is None:
        return Listing(path, content) if explicit else None
    if _lines(content) == _lines(current):
        return None  # the file shown unchanged (a 1.5B model drops blank lines when it copies one)
    keeps_module = not drops_module_lines(path, current, content)  # else a fragment
    if keeps_module and (_is_whole(content, current) or moves_names_out(path, current, content)):
        return Listing(path, content)
    placed = place_definitions(path, current, content)
    if placed is not None:  # definitions of the file, put in place of its own; the rest kept
        return Listing(path, placed) if placed != current else None
    spliced = None if has_grammar(path) else splice(current, content)
    if spliced is not None:
        return Listing(path, spliced)
    # named on the line right before it and no shorter than the file: the file rewritten, every line
    # changed (a rename). Not after a blank line: that is a list of the files ("Files to change: …").
    rewritten = adjacent and _lines_in(content) >= _lines_in(current) and keeps_module
    return Listing(path, content) if rewritten else None


def _lines_in(text: str) -> int:
    return len(_lines(text))


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.splitlines() if line.strip()]


def _language_fits(lang: str, path: str) -> bool:
    """Output never is a file; a shell block is one only for a shell script."""
    if lang in _OUTPUT_LANGS:
        return False
    return lang not in _SHELL_LANGS or Path(path).suffix in _SCRIPT_SUFFIXES


def is_path_line(line: str) -> bool:
    """A line that is nothing but a file's path (the line that introduces a listing)."""
    return _PATH_LINE.match(line.strip()) is not None


def _path_line(before: str) -> tuple[str, int] | None:
    """The path on the line right before the block, when that line is nothing but a path, and how
    many characters of ``before`` that line takes from its end."""
    lines = before.rstrip().splitlines()
    if not lines:
        return None
    match = _PATH_LINE.match(lines[-1])
    if match is None:
        return None
    return match.group("path").removeprefix("./"), len(before) - before.rstrip().rfind(lines[-1])


def _path_inside(body: str, workspace: Path | Sequence[Path]) -> tuple[list[tuple[str, bool]], str] | None:
    """The files the block's first line names, when that line is nothing but a path (the path and
    the file it may mean, ``_with_matches``) or a comment that is nothing but the path of a file of
    the workspace (``# src/app.py``: that file only), and the rest of the block."""
    first, _, rest = body.partition("\n")
    if not rest.strip():
        return None
    label = _COMMENT_LABEL.match(first)
    if label is not None:
        files = [
            found for found in _with_matches([label["path"]], workspace) if _is_file(workspace, found[0])
        ]
        return (files, rest) if files else None
    match = _PATH_LINE.match(first)
    if match is None or first.lstrip().startswith(("#", "-", ">")):
        return None  # a heading or a list item is content, not a path
    return _with_matches([match.group("path").removeprefix("./")], workspace), rest


def _first_line_kept(body: str, current: str | None) -> bool:
    """The block's first line is the file's own first line (a file that starts with a comment
    naming itself): content, not a label to drop."""
    first = body.partition("\n")[0].strip()
    return current is not None and current.lstrip().partition("\n")[0].strip() == first


def _last_paragraph(before: str) -> str:
    return before.rstrip().rsplit("\n\n", 1)[-1]


def _nearby_paths(before: str, prompt: str, workspace: Path | Sequence[Path]) -> list[str]:
    """Files named in the sentence before the block (nearest first), then those the user named,
    unless the sentence names a new file of their kind: the block is that file's ("create
    `slugify.py` with:"), never a fragment of the user's ``main.py``."""
    near = _named(_last_paragraph(before), workspace)[::-1]
    named = _named(prompt, workspace)
    new_kinds = {
        Path(path).suffix
        for path in near
        if _read(workspace, path) is None and _ending_with(workspace, path) is None
    }
    named = [path for path in named if path in near or Path(path).suffix not in new_kinds]
    return list(dict.fromkeys(near + named))


def _named(text: str, workspace: Path | Sequence[Path]) -> list[str]:
    """The file paths ``text`` names, relative to the workspace where they lie in it: a model writes
    the root's ``settings.json`` as ``/settings.json`` or with the workspace's absolute path."""
    return [_relative(m.group(0).removeprefix("./"), workspace) for m in _NAMED.finditer(text)]


def _relative(path: str, workspace: Path | Sequence[Path]) -> str:
    if not path.startswith("/"):
        return path
    for root in _roots(workspace):
        if Path(path).is_relative_to(root):
            return Path(path).relative_to(root).as_posix()
        if (root / path.lstrip("/")).is_file():
            return path.lstrip("/")
    return path


def _read(workspace: Path | Sequence[Path], path: str) -> str | None:
    """The file's text, or None when there is none (or it is not a readable text file)."""
    try:
        with open_text(workspace, path) as handle:
            return handle.read(MAX_FILE_CHARS)
    except (ToolError, OSError, ValueError):
        return None


def _is_whole(content: str, current: str) -> bool:
    """The block is the file rewritten: about as long as the file, most of its lines kept."""
    new = [line.strip() for line in content.splitlines() if line.strip()]
    old = [line.strip() for line in current.splitlines() if line.strip()]
    kept = set(new)
    return not old or (
        len(new) >= WHOLE_SHARE * len(old) and sum(line in kept for line in old) >= WHOLE_SHARE * len(old)
    )


def splice(current: str, fragment: str) -> str | None:
    """``current`` with the block that starts like ``fragment`` replaced by it, or None when the
    fragment's first line is not exactly one line of the file (or the fragment is one line)."""
    new = fragment.strip("\n").splitlines()
    old = current.splitlines()
    if len(new) < 2:
        return None
    starts = [i for i, line in enumerate(old) if line.strip() == new[0].strip() and line.strip()]
    if len(starts) != 1:
        return None
    start = starts[0]
    end = _block_end(old, start) if _opens_block(old, start) else min(len(old), start + len(new))
    if _is_subsequence([line.strip() for line in new], [line.strip() for line in old[start:end]]):
        return None  # a quote of the block (or of its start), not a change
    new = _reindented(new, _indent(old[start]))
    trailing_newline = "\n" if current.endswith("\n") else ""
    return "\n".join(old[:start] + new + old[end:]) + trailing_newline


def _is_subsequence(short: list[str], long: list[str]) -> bool:
    rest = iter(long)
    return all(any(line == other for other in rest) for line in short)


def _opens_block(lines: list[str], at: int) -> bool:
    following = next((line for line in lines[at + 1 :] if line.strip()), None)
    return following is not None and len(_indent(following)) > len(_indent(lines[at]))


def _block_end(lines: list[str], start: int) -> int:
    """The index after the block that starts at ``start`` (indentation-delimited, closer included)."""
    depth = len(_indent(lines[start]))
    end = start + 1
    while end < len(lines) and (not lines[end].strip() or len(_indent(lines[end])) > depth):
        end += 1
    if end < len(lines) and len(_indent(lines[end])) == depth and lines[end].strip() in _CLOSERS:
        end += 1
    while end - 1 > start and not lines[end - 1].strip():
        end -= 1
    return end


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _reindented(lines: list[str], indent: str) -> list[str]:
    """The fragment moved to ``indent`` (a model often writes a method without its class's indent)."""
    own = _indent(lines[0])
    if own == indent:
        return lines
    return [indent + line[len(own) :] if line.startswith(own) else line for line in lines]


def without_code(text: str) -> str:
    """``text`` with its fenced code blocks taken out (what it says in prose)."""
    return _BLOCK.sub("", text)


def listing_call(listing: Listing) -> TextCall:
    return TextCall("write_file", {"path": listing.path, "content": listing.content})


def without_listings(text: str, listings: Sequence[Listing]) -> str:
    """The reply's prose: the text with the listings taken out (their content rides in the calls)."""
    out, at = [], 0
    for listing in sorted(listings, key=lambda item: item.span):
        out.append(text[at : listing.span[0]])
        at = listing.span[1]
    out.append(text[at:])
    return re.sub(r"\n{3,}", "\n\n", "".join(out)).strip()


Mend = Callable[[Path, Mapping[str, str]], Mapping[str, tuple[str, list[str]]]]
"""Files written out in one reply (path to content) -> those it mends, with what it added to each."""


class WholeFile(ReplyFormat):
    """Calls written as text, and files written out whole in the reply: the edit format small models
    get right. The file tools and the task list are not described (their calls still run)."""

    writes_out = True

    def __init__(self, calls: TextCalls, mend: Mend | None = None) -> None:
        self.calls = calls
        self.name: ToolCallFormat = calls.name
        self.tools_in_prompt = calls.tools_in_prompt
        self._mend = mend

    def withheld(self, offered: Collection[str]) -> frozenset[str]:
        return WITHHELD_WHEN_WRITING_OUT

    def describes_tools(self, shown_whole: bool) -> bool:
        # shown the whole workspace, a small model writes the files out (as with Aider) instead of
        # reaching for sed when it is told of no tool
        return not shown_whole

    def hold(self) -> Hold:
        return self.calls.hold()

    async def parse(self, text: str, context: ReplyContext) -> ParsedReply | None:
        parsed = self.calls.read_calls(text, context)  # echoes already declined there
        if parsed is None and has_edit_blocks(text):  # a long file changed by SEARCH/REPLACE blocks
            found, prose, notice = await asyncio.to_thread(block_calls, text, context.workspace)
            calls = [TextCall(name, input) for name, input in found]
            if calls and await _echoes(text, calls, context):
                return ParsedReply(declined=True)  # a shown block echoed: never applied, --yolo or not
            parsed = ParsedReply(calls, prose, notice) if calls else None
        if parsed is not None or "```" not in text:
            return parsed
        listings, added = await asyncio.to_thread(self._listings, text, context)
        if not listings:
            return None
        echoed = await _echoed(text, listings, context)
        kept = [item for item in listings if item not in echoed]
        if not kept:
            return ParsedReply(declined=True)  # shown text echoed: never written, --yolo or not
        skipped = f" {echoed_notice([item.path for item in echoed])}" if echoed else ""
        return ParsedReply(
            [listing_call(item) for item in kept],
            without_listings(text, listings),
            listing_notice([item.path for item in kept]) + added + skipped,
            written_as=text,
            wrote_out=True,
            # a small model sent back after its files were written rewrote them worse (it copied diff
            # lines in): a reply that writes files and says what it did ends the turn
            answered_with_files=_concludes(text, listings),
        )

    def _listings(self, text: str, context: ReplyContext) -> tuple[list[Listing], str]:
        """The files the reply writes out, mended where the profile mends them, and what was added."""
        root = context.workspace if isinstance(context.workspace, Path) else None
        shown = overview(root, MAX_SHOWN_FILES)[0] if root is not None else []
        listings = file_listings(text, context.workspace, context.user_words, shown)
        if root is None or self._mend is None:
            return listings, ""
        mended = self._mend(root, {item.path: item.content for item in listings})
        added = [f"`{line}` to {path}" for path, (_, lines) in mended.items() for line in lines]
        listings = [replace(item, content=mended.get(item.path, (item.content, []))[0]) for item in listings]
        note = f" Shiro added {', '.join(added)} (a name used but never imported)." if added else ""
        return listings, note

    def render(self, messages: list[Message]) -> list[Message]:
        return self.calls.render(messages)

    def after_native_call(self) -> ReplyFormat:
        return self.calls.after_native_call()

    def when_tools_refused(self) -> ReplyFormat | None:
        refused = self.calls.when_tools_refused()
        return WholeFile(refused, self._mend) if isinstance(refused, TextCalls) else None


async def _echoes(text: str, calls: list[TextCall], context: ReplyContext) -> bool:
    """The echo rule (``echoes.py``) on a reply's edit blocks; in a thread, as it reads the files."""
    shown, changes = _echo_inputs(context)
    return await asyncio.to_thread(echoes, text, calls, [], shown, changes)


async def _echoed(text: str, listings: list[Listing], context: ReplyContext) -> list[Listing]:
    """The echo rule (``echoes.py``) on the files a reply writes out: those it copied from what the
    model was shown. In a thread, as it reads the files."""
    shown, changes = _echo_inputs(context)
    return await asyncio.to_thread(echoed_listings, text, listings, shown, changes)


def _echo_inputs(context: ReplyContext) -> tuple[Shown, Callable[[str, str], bool]]:
    """What the model was shown, and whether writing a content would change a file."""
    return Shown.of(context.history, context.instructions), partial(
        _changes_file, context.workspace, context.redactor
    )


def _changes_file(workspace: Path | Sequence[Path], redactor: Redactor, path: str, content: str) -> bool:
    """Whether writing ``content`` out would change ``path`` (its hidden secret values given back,
    as write_file does). Blocking: reads the file through the confined reader."""
    try:
        current = read_text(workspace, path)
        return with_hidden_values(current, content, redactor) != current
    except (ToolError, OSError, HiddenSecretWrite):
        return True


def listing_notice(paths: list[str]) -> str:
    return f"The model wrote out {', '.join(paths)} in its reply; Shiro writes {'them' if len(paths) > 1 else 'it'} (write_file)."


def echoed_notice(paths: list[str]) -> str:
    them = "them" if len(paths) > 1 else "it"
    return f"Shiro did not write {', '.join(paths)}: the model copied {them} from text it was shown."


def _concludes(reply: str, listings: list[Listing]) -> bool:
    """Whether the reply says something, in prose, after the last file it wrote out (what it did)."""
    after = without_code(reply[max(listing.span[1] for listing in listings) :])
    return len(re.findall(r"[A-Za-z]\w*", after)) >= CONCLUSION_WORDS

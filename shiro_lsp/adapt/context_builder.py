"""What a model with a small window is shown of the workspace with the user's message: a real share
of its window, spent in this order on

1. the files the message names (by path, by a unique end of a path, or by a unique file name);
2. the files that define the symbols it names (found by the repository map's definitions);
3. the files of a pasted traceback or error (``File "x.py", line 12``, ``src/a.js:40:7``), the
   frame nearest the error first;
4. the tests of those files (``test_x.py``, ``x_test.py``, ``x.test.js``, ``x.spec.ts``);
5. the repository map of the rest (:mod:`shiro_lsp.adapt.repo_map`), ranked toward all of the above.

A file the message names is shown whole when it fits; so is a short file found otherwise. A long
file found otherwise, or one that does not fit, gives its outline (the signature lines of its
definitions) and the lines around what brought it in (the named symbol's definition, the
traceback's line). The map gets its own share, whatever the files leave. A workspace small enough
is shown whole. The text is a pure function of the workspace and the message (deterministic order,
no clock), so the prompt prefix it is part of stays byte-identical and the server's cache serves it. Ignore files and secrets files are honoured by the scan; secret
values are cut out by the turn's redactor. Blocking (reads): call it in a thread.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

from shiro_lsp.adapt.formats.search_replace import HOW, LONG_FILE_CHARS, LONG_FILE_LINES
from shiro_lsp.adapt.repo_map import Definition, FileTags, Scan, outline, ranked, render
from shiro_lsp.bounded import small_int
from shiro_lsp.context.estimate import tokens_for_chars
from shiro_lsp.errors import ToolError
from shiro_lsp.fs.secrets import is_secret_path
from shiro_lsp.tools.files import open_text

MAX_NAMED_FILES = 6
MAX_SYMBOL_FILES = 4
MAX_TRACEBACK_FILES = 3
MAX_TESTS = 3
MAX_DEFINERS = 3
"""A name defined in more files than this names none of them."""
MAX_WHOLE_WORKSPACE = 24
"""A workspace of at most this many files is shown whole when it fits."""
MIN_PARTIAL_TOKENS = 200
MAP_SHARE = 4
"""When other files exist, the map gets 1/MAP_SHARE of the budget, at most MAX_MAP_TOKENS: kept for
it before the files are shown, and all it may spend (what the files leave is left unspent)."""
MAX_MAP_TOKENS = 1_500
"""About Aider's default map (``--map-tokens`` 1024, up to a window's eighth): past that, a ranked map's
tail names files no step reads, and every token of it costs a CPU-served model time before it answers."""
PARTIAL_HEAD = ", too many to show whole."
MAX_HOW_PATHS_CHARS = 300
CONTEXT_LINES = 15
"""Lines shown each side of a traceback's line when its definition does not fit."""

_PATH_WORD = re.compile(r"[\w./\\-]*[\w/]")
_IDENTIFIER = re.compile(r"(?<![\w.])(`?)([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)(`?)(\(?)")
_FRAME = re.compile(r'File "(?P<path>[^"\n]+)", line (?P<line>\d+)(?:, in [\w<>.]+)?')
_LOCATION = re.compile(r"(?P<path>[\w./\\-]*\w\.[A-Za-z]\w*):(?P<line>\d+)")


@dataclass(frozen=True)
class BuiltContext:
    text: str
    """'' when there is nothing to show."""
    whole: bool
    """Every file of the workspace is shown whole."""
    files: tuple[str, ...]
    """The files shown whole, in order."""
    tokens: int
    """The estimate of ``text``'s tokens."""
    partial: tuple[str, ...] = ()
    """The files shown in part (their outline and a region)."""


@dataclass(frozen=True)
class _Focus:
    rel: str
    region: tuple[int, int] | None = None
    """0-based first and last line of what brought the file in (None: the file as a whole)."""
    named: bool = False
    """The message names the file: shown whole when it fits, however long. A long file Shiro found
    itself (a symbol's, a traceback's, a test) is shown in part: its outline and that region."""


def build_context(
    scan: Scan,
    root: Path,
    message: str,
    tokens: int,
    redact: Callable[[str], str],
    *,
    overview: bool = True,
) -> BuiltContext:
    """What to show with ``message`` in at most ``tokens`` (estimated) tokens. Without ``overview``
    (a later turn of a session that was shown it), only the files the message points at. When a
    long file is shown (whole or in part), how to change one (:data:`search_replace.HOW`) ends it."""
    reserve = tokens_for_chars(len(HOW) + MAX_HOW_PATHS_CHARS)
    built = _built(scan, root, message, max(0, tokens - reserve), redact, overview=overview)
    long = [*built.partial, *(rel for rel in built.files if _long(scan, rel))]
    if not long:
        return built
    text = f"{built.text}\n\n{HOW.format(files=', '.join(long)[:MAX_HOW_PATHS_CHARS])}"
    return replace(built, text=text, tokens=tokens_for_chars(len(text)))


def first_look(scan: Scan, root: Path, message: str, tokens: int, redact: Callable[[str], str]) -> str:
    """The repository map alone, ranked toward what ``message`` points at, in ``tokens``: a first
    look for a model with a large window, which reads the files it needs itself."""
    focus = {item.rel for item in focus_files(scan, root, message)}
    heading = "The repository's files, with their main definitions:"
    repo_map = render(
        scan, ranked(scan, focus, mentioned_names(message)), tokens - tokens_for_chars(len(heading))
    )
    return f"{heading}\n{redact(repo_map)}" if repo_map else ""


def _long(scan: Scan, rel: str) -> bool:
    tags = scan.tags.get(rel)
    lines = tags.lines if tags is not None else 0
    return lines > LONG_FILE_LINES or scan.sizes.get(rel, 0) > LONG_FILE_CHARS


def _built(
    scan: Scan,
    root: Path,
    message: str,
    tokens: int,
    redact: Callable[[str], str],
    *,
    overview: bool = True,
) -> BuiltContext:
    focus = focus_files(scan, root, message)
    names = mentioned_names(message)
    whole_workspace = _whole_workspace(scan, root, focus, tokens, redact)
    if whole_workspace is not None and overview:
        return whole_workspace
    if whole_workspace is not None:  # the same verdict every turn (so the same tools), fewer files
        named = [block for item in focus if (block := whole_file(root, item.rel, tokens * 4, redact))]
        text = "\n\n".join(named)
        return BuiltContext(text, True, tuple(item.rel for item in focus), tokens_for_chars(len(text)))
    others = [rel for rel in scan.files if rel not in {item.rel for item in focus}]
    reserve = min(tokens // MAP_SHARE, MAX_MAP_TOKENS) if others and overview else 0
    blocks: list[str] = []
    shown: list[str] = []
    partial: list[str] = []
    left = tokens - reserve
    for position, item in enumerate(focus):
        later = len(focus) - position - 1
        block, whole = _file_view(
            scan, root, item, left - later * MIN_PARTIAL_TOKENS, left // (later + 1), redact
        )
        if block:
            blocks.append(block)
            left -= tokens_for_chars(len(block) + 2)
            (shown if whole else partial).append(item.rel)
    if not overview:
        text = "\n\n".join(blocks)
        return BuiltContext(text, False, tuple(shown), tokens_for_chars(len(text)), tuple(partial))
    rest = ranked(scan, {item.rel for item in focus}, names)
    heading = "Other files, with their main definitions:"
    skip = {item.rel for item in focus}
    room = min(reserve, left + reserve)  # the files may have spent some of it (a partial view's minimum)
    repo_map = render(scan, rest, room - tokens_for_chars(len(heading) + 2), skip=skip)
    if repo_map:
        blocks.append(f"{heading}\n{redact(repo_map)}")
    text = "\n\n".join(blocks)
    return BuiltContext(text, False, tuple(shown), tokens_for_chars(len(text)), tuple(partial))


def _whole_workspace(
    scan: Scan, root: Path, focus: list[_Focus], tokens: int, redact: Callable[[str], str]
) -> BuiltContext | None:
    """Every file whole (named ones first), when the workspace is small and they all fit."""
    if not scan.complete or not scan.files or len(scan.files) > MAX_WHOLE_WORKSPACE:
        return None
    if sum(scan.sizes.get(rel, 0) for rel in scan.files) > tokens * 4:
        return None
    order = list(dict.fromkeys([item.rel for item in focus] + list(scan.files)))
    blocks = [block for rel in order if (block := whole_file(root, rel, tokens * 4, redact))]
    text = "\n\n".join(blocks)
    if tokens_for_chars(len(text)) > tokens:
        return None
    shown = tuple(rel for rel in order if scan.sizes.get(rel, 0) > 0)
    return BuiltContext(text, True, shown, tokens_for_chars(len(text)))


# --- what the message points at ------------------------------------------------------------------


def focus_files(scan: Scan, root: Path, message: str) -> list[_Focus]:
    """The files to show before the map, in order (see the module docstring), each once."""
    prose = _LOCATION.sub(" ", _FRAME.sub(" ", message))  # a traceback's paths are its own, not named
    items: list[_Focus] = [_Focus(rel, named=True) for rel in named_files(scan, root, prose)]
    items += _symbol_files(scan, prose)
    items += _traceback_files(scan, root, message)
    unique: dict[str, _Focus] = {}
    for item in items:
        unique.setdefault(item.rel, item)  # each file where it first comes, as it first comes
    tests = [_Focus(test) for test in tests_of(scan, list(unique)) if test not in unique]
    return [*unique.values(), *tests]


def named_files(scan: Scan, root: Path, message: str) -> list[str]:
    """Files the message names: a workspace path (``./`` and the workspace's absolute path taken
    off), the unique file whose path ends so, or the unique file of that name."""
    found: list[str] = []
    for word in _PATH_WORD.findall(message):
        rel = _workspace_path(scan, root, word.rstrip(".-/"))
        if rel is not None and rel not in found:
            found.append(rel)
    return found[:MAX_NAMED_FILES]


def _workspace_path(scan: Scan, root: Path, word: str) -> str | None:
    word = word.replace("\\", "/")
    if word.startswith("/"):
        try:
            word = PurePosixPath(word).relative_to(root.as_posix()).as_posix()
        except ValueError:
            return None
    word = word.removeprefix("./")
    if "." not in word.rsplit("/", 1)[-1] and "/" not in word:
        return None  # an ordinary word, not a path
    if word in scan.sizes:
        return word
    ends = [rel for rel in scan.files if rel.endswith("/" + word)]
    if len(ends) == 1:
        return ends[0]
    if not ends and "/" in word and _is_readable(root, word):
        return word  # named by its path, though the map's walk leaves it out (an ignored file)
    return None


def _is_readable(root: Path, rel: str) -> bool:
    if is_secret_path(rel):
        return False
    try:
        with open_text(root, rel):
            return True
    except (ToolError, OSError, ValueError):
        return False


def mentioned_names(message: str) -> list[str]:
    """The identifiers the message mentions, in order (``Class.method`` gives both)."""
    names: list[str] = []
    for match in _IDENTIFIER.finditer(message):
        for name in match.group(2).split("."):
            if name not in names:
                names.append(name)
    return names


def _symbol_files(scan: Scan, message: str) -> list[_Focus]:
    """The files defining the symbols the message names. A plain word counts only when one file
    defines it; a name written as code (``snake_case``, ``CamelCase``, in backticks, called) when
    at most a few do. In a qualified name (``pkg.mod.Name``, ``Class.method``) the symbol is its
    last part that the workspace defines, and the parts before it pick among its definers; a name
    written as ``name=`` is a keyword argument, not a symbol."""
    items: list[_Focus] = []
    for match in _IDENTIFIER.finditer(message):
        if _is_keyword_argument(message, match.end()):
            continue
        as_code = bool(match.group(1) and match.group(3)) or bool(match.group(4))
        for rel, definition in _qualified_definers(scan, match.group(2).split("."), as_code):
            if all(item.rel != rel for item in items):
                items.append(_Focus(rel, (definition.start, definition.end)))
    return items[:MAX_SYMBOL_FILES]


def _is_keyword_argument(message: str, end: int) -> bool:
    return message[end : end + 1] == "=" and message[end + 1 : end + 2] != "="


def _qualified_definers(scan: Scan, parts: list[str], as_code: bool) -> list[tuple[str, Definition]]:
    """The definers of the rightmost part of ``parts`` the workspace defines (within the limits of
    :func:`_symbol_files`), those its qualifiers point at first, and only those when some are."""
    for index in range(len(parts) - 1, -1, -1):
        name, qualifiers = parts[index], parts[:index]
        code = as_code or bool(qualifiers) or _symbol_like(name)
        definers = scan.definers(name)
        if not code:  # a plain word: only a top-level definition outside the tests
            definers = [(rel, d) for rel, d in definers if d.parent is None and not is_test_path(rel)]
        pointed = [(rel, d) for rel, d in definers if _qualified_by(scan, rel, d, qualifiers)]
        definers = pointed or definers
        if not definers or len({rel for rel, _ in definers}) > (MAX_DEFINERS if code else 1):
            continue
        if not code and len(name) < 4:
            continue
        return definers
    return []


def _qualified_by(scan: Scan, rel: str, definition: Definition, qualifiers: list[str]) -> bool:
    """The qualifier right before the name is the definition's class, or a folder or module of its
    file (``validate`` for ``pkg/validate.py``)."""
    if not qualifiers:
        return False
    nearest = qualifiers[-1]
    tags = scan.tags.get(rel)
    parent = next((d for d in tags.definitions if d.line == definition.parent), None) if tags else None
    if parent is not None and parent.name == nearest:
        return True
    path = PurePosixPath(rel)
    return nearest in path.parent.parts or path.stem == nearest


def _symbol_like(name: str) -> bool:
    inner = name.strip("_")
    return "_" in inner or any(c.isdigit() for c in inner) or (inner[1:] != inner[1:].lower())


def _traceback_files(scan: Scan, root: Path, message: str) -> list[_Focus]:
    """The workspace files of a traceback's frames and of ``path:line`` locations, each file once
    with the line nearest the error: a Python traceback's last frame first (most recent call
    last), other locations in the order written (a JavaScript stack lists the nearest first)."""
    frames = [(m.group("path"), small_int(m.group("line")) or 0) for m in _FRAME.finditer(message)][::-1]
    frames += [(m.group("path"), small_int(m.group("line")) or 0) for m in _LOCATION.finditer(message)]
    items: list[_Focus] = []
    for path, line in frames:
        rel = _workspace_path(scan, root, path)
        if rel is not None and rel in scan.sizes and all(item.rel != rel for item in items):
            items.append(_Focus(rel, _around(scan, rel, line - 1)))
    return items[:MAX_TRACEBACK_FILES]


def _around(scan: Scan, rel: str, line: int) -> tuple[int, int]:
    """The innermost definition holding ``line``, else a few lines each side of it."""
    tags = scan.tags.get(rel)
    holding = [d for d in tags.definitions if d.start <= line <= d.end] if tags else []
    if holding:
        inner = min(holding, key=lambda d: d.end - d.start)
        return inner.start, inner.end
    return max(0, line - CONTEXT_LINES), line + CONTEXT_LINES


def tests_of(scan: Scan, files: list[str]) -> list[str]:
    """The test files of ``files`` (those not tests themselves), the nearest in the tree first."""
    found: list[str] = []
    for rel in files:
        path = PurePosixPath(rel)
        if is_test_path(path.name):
            continue
        names = _test_names(path)
        candidates = [test for test in scan.files if PurePosixPath(test).name in names and test != rel]
        if candidates:
            best = max(candidates, key=lambda test: (_shared_parts(test, rel), -len(test), test))
            if best not in found:
                found.append(best)
    return found[:MAX_TESTS]


def _test_names(path: PurePosixPath) -> set[str]:
    stem, suffix = path.stem, path.suffix
    if suffix in (".py", ".pyi"):
        return {f"test_{stem}.py", f"{stem}_test.py", f"tests_{stem}.py"}
    return {f"{stem}.{kind}{ext}" for kind in ("test", "spec") for ext in (suffix, ".js", ".ts", ".tsx")}


def is_test_path(path: str) -> bool:
    """A file of tests, by the names test runners look for (``test_x.py``, ``x_test.py``, ``x.test.ts``)."""
    name = PurePosixPath(path).name
    stem = name.split(".", 1)[0]
    return stem.startswith("test_") or stem.endswith("_test") or ".test." in name or ".spec." in name


def _shared_parts(a: str, b: str) -> int:
    shared = 0
    for left, right in zip(PurePosixPath(a).parts[:-1], PurePosixPath(b).parts[:-1], strict=False):
        if left != right:
            break
        shared += 1
    return shared


# --- how a file is shown -------------------------------------------------------------------------


def _file_view(
    scan: Scan, root: Path, item: _Focus, allowance: int, share: int, redact: Callable[[str], str]
) -> tuple[str, bool]:
    """The file whole when it fits ``allowance`` tokens (and the message names it or it is not
    long), else its partial view in ``share``."""
    if item.named or not _long(scan, item.rel):
        block = whole_file(root, item.rel, allowance * 4, redact)
        if block and tokens_for_chars(len(block)) <= allowance:
            return block, True
    return partial_file(scan, root, item, max(share, MIN_PARTIAL_TOKENS), redact), False


def whole_file(root: Path, rel: str, chars: int, redact: Callable[[str], str]) -> str:
    """``rel`` whole in a fence under its path (the form a model writes a file out in), or '' when
    it is empty, unreadable, binary, a secrets file or longer than ``chars``."""
    content = _read(root, rel, chars)
    if content is None or len(content) > chars or not content.strip():
        return ""
    return f"{rel}\n{_fenced(redact(content))}"


def partial_file(scan: Scan, root: Path, item: _Focus, tokens: int, redact: Callable[[str], str]) -> str:
    """A file too long to show whole: its outline, then the lines of ``item.region`` (cut to fit),
    under headings that are not a bare path, so that a copy of it is never read as the file."""
    tags = scan.tags.get(item.rel)
    content = _read(root, item.rel, scan.sizes.get(item.rel, 0) + 1) or ""
    lines = content.split("\n")
    head = f"{item.rel} has {len(lines)} lines{PARTIAL_HEAD}"
    parts = [head]
    chars = tokens * 4 - len(head)
    sketch = _sketch(tags, item.region, chars // 2) if tags and tags.definitions else ""
    if sketch:
        parts.append(f"Its definitions:\n{redact(sketch)}")
        chars -= len(parts[-1])
    if item.region is not None and lines:
        first, last = item.region
        region = _cut(lines, first, min(last, len(lines) - 1), chars - 60)
        if region is not None:
            shown_first, shown_last, body = region
            parts.append(f"Lines {shown_first + 1}-{shown_last + 1} of {item.rel}:\n{_fenced(redact(body))}")
    elif len(parts) == 1:
        parts.append("Read it with read_file.")
    return "\n".join(parts)


def _sketch(tags: FileTags, region: tuple[int, int] | None, chars: int) -> str:
    """The file's outline in ``chars``: every definition when they fit, else the top-level ones and
    those around the region, then the others in file order while they fit."""
    whole = outline(tags)
    if len(whole) <= chars:
        return whole
    first, last = region or (-1, -1)
    lines = {d.line for d in tags.definitions if d.parent is None or (d.start <= last and d.end >= first)}
    used = len(outline(tags, lines))
    for definition in tags.definitions:
        cost = sum(len(line) + 1 for line in definition.header)
        if definition.line not in lines and used + cost <= chars:
            lines.add(definition.line)
            used += cost
    return _first_lines(outline(tags, lines), chars)


def _first_lines(text: str, chars: int) -> str:
    """The lines of ``text`` that fit ``chars``, and a ``⋮`` line when some do not."""
    if len(text) <= chars:
        return text
    kept = text[: text.rfind("\n", 0, max(0, chars - 2)) + 1]
    return kept + "⋮" if kept else ""


def _cut(lines: list[str], first: int, last: int, chars: int) -> tuple[int, int, str] | None:
    """Lines ``first..last``, fewer from the end when they do not fit ``chars``."""
    taken: list[str] = []
    used = 0
    for at in range(first, last + 1):
        used += len(lines[at]) + 1
        if used > chars:
            break
        taken.append(lines[at])
    if not taken:
        return None
    return first, first + len(taken) - 1, "\n".join(taken)


def _fenced(content: str) -> str:
    fence = "````" if "```" in content else "```"
    return f"{fence}\n{content.rstrip(chr(10))}\n{fence}"


def _read(root: Path, rel: str, chars: int) -> str | None:
    try:
        with open_text(root, rel) as handle:  # refuses secrets files, binaries and paths outside
            return handle.read(chars + 1)
    except (ToolError, OSError, ValueError):
        return None

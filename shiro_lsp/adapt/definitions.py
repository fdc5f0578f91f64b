"""Where a block of code a model wrote belongs in a file: the definitions it rewrites.

A model told where a bug is often writes out only the function it changed. Such a block replaces
that function (or class, or method, or constant) in the file, found by its definition (tree-sitter,
the repository map's tags), and everything else stays: the module docstring, the imports,
``__all__``, the other functions. Imports the block adds go after the file's own. A definition the
block adds next to one it rewrites goes right after that one. A class the block gives only some of
the members of keeps the others (each member is placed by its name).

A block is placed only when it parses, holds nothing but definitions (and imports, and comments),
and every definition it rewrites is found exactly once; a block that defines only new things is
never placed: nothing is added to a file by inference. ``None`` says the block cannot be placed.
"""

from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass
from pathlib import PurePosixPath

from shiro_lsp.adapt.repo_map import LANGUAGES, Definition, FileTags, file_tags, parse_tree
from shiro_lsp.bounded import parses_as_python, python_module

_IMPORT = {
    "python": re.compile(r"^(?:import\s+\w|from\s+[\w.]+\s+import\s)"),
    "javascript": re.compile(r"^(?:import\s|(?:const|let|var)\s+[\w{}\s,]+=\s*require\()"),
}
_COMMENT = {"python": ("#",), "javascript": ("//", "/*", "*", "*/")}


@dataclass(frozen=True)
class _Edit:
    start: int
    """First row replaced (0-based)."""
    end: int
    """Row after the last replaced (``start``: an insertion)."""
    lines: list[str]


_FENCE_SUFFIX = {"python": ".py", "py": ".py", "javascript": ".js", "js": ".js", "jsx": ".js"}
_FENCE_SUFFIX |= {"typescript": ".ts", "ts": ".ts", "tsx": ".tsx"}


def defined_names(block: str, fence_language: str) -> list[str]:
    """The names a block of nothing but definitions (and imports) defines at its top level, read as
    the language its fence names (Python when it names none); [] for any other block."""
    suffix = _FENCE_SUFFIX.get(fence_language.lower(), ".py" if not fence_language else "")
    language = LANGUAGES.get(suffix)
    if language is None:
        return []
    source = textwrap.dedent(block.strip("\n")) + "\n"
    if not _parses(source, language):
        return []
    family = "python" if language == "python" else "javascript"
    tops = [d for d in file_tags("block" + suffix, source, language).definitions if d.parent is None]
    if _loose_lines(source.split("\n"), tops, family) is None:
        return []
    return [d.name for d in tops if d.kind != "constant"]


def rewrites_only_its_own(path: str, current: str, block: str) -> bool:
    """Whether ``block`` is nothing but definitions (and imports), each of a name ``path``'s file
    ``current`` defines at its top level: it changes what the file has and adds nothing."""
    suffix = PurePosixPath(path).suffix.lower()
    language = LANGUAGES.get(suffix)
    ours = defined_names(block, suffix.lstrip(".")) if language is not None else []
    if language is None or not ours:
        return False
    theirs = {d.name for d in file_tags(path, current, language).definitions if d.parent is None}
    return set(ours) <= theirs


def has_grammar(path: str) -> bool:
    """Whether definitions in ``path`` are found by their grammar (else a fragment is placed by text)."""
    return PurePosixPath(path).suffix.lower() in LANGUAGES


def place_definitions(path: str, current: str, block: str) -> str | None:
    """``current`` with the definitions of ``block`` put in place of the file's own (``current``
    itself when the block only quotes them), or None when it cannot be placed (module docstring)."""
    language = LANGUAGES.get(PurePosixPath(path).suffix.lower())
    if language is None:
        return None
    family = "python" if language == "python" else "javascript"
    source = textwrap.dedent(block.strip("\n")) + "\n"
    if not _parses(source, language):
        return None
    lines = source.split("\n")
    ours, theirs = file_tags(path, source, language), file_tags(path, current, language)
    tops = [d for d in ours.definitions if d.parent is None]
    imports = _loose_lines(lines, tops, family)
    if not tops or imports is None:
        return None
    rows = current.split("\n")
    edits = _placed(tops, ours, lines, theirs, rows, None)
    if edits is None:
        return None
    new_imports = [line for line in imports if line.strip() not in {row.strip() for row in rows}]
    if new_imports:
        at = _import_row(current, rows, family)
        edits.insert(0, _Edit(at, at, new_imports))
    # from the bottom up, so rows above keep their numbers; insertions at one row in block order
    for _, edit in sorted(enumerate(edits), key=lambda e: (e[1].start, e[1].end, e[0]), reverse=True):
        rows[edit.start : edit.end] = edit.lines
    return "\n".join(rows)


def _parses(source: str, language: str) -> bool:
    if language == "python":
        return parses_as_python(source)
    return not parse_tree(source, language).root_node.has_error


def _loose_lines(lines: list[str], tops: list[Definition], family: str) -> list[str] | None:
    """The block's import lines (outside its definitions), or None when it holds anything else."""
    covered = {row for d in tops for row in range(d.start, d.end + 1)}
    imports = []
    for row, line in enumerate(lines):
        text = line.strip()
        if row in covered or not text or text.startswith(_COMMENT[family]):
            continue
        if not _IMPORT[family].match(text):
            return None
        imports.append(line)
    return imports


def _placed(
    tops: list[Definition],
    ours: FileTags,
    lines: list[str],
    theirs: FileTags,
    rows: list[str],
    within: Definition | None,
) -> list[_Edit] | None:
    """The edits that put ``tops`` (sibling definitions of the block) in place of the file's
    definitions of the same names inside ``within`` (None: anywhere, the top level preferred); a
    new one goes right after the sibling before it (or before the one after it)."""
    targets: list[Definition | None] = []
    for top in tops:
        target = _target(top, theirs, within)
        if isinstance(target, _Ambiguous):
            return None
        targets.append(target)
    if not any(targets):
        return None
    edits: list[_Edit] = []
    for at, (top, target) in enumerate(zip(tops, targets, strict=True)):
        if target is not None:
            if _quotes(lines[top.start : top.end + 1], rows[target.start : target.end + 1]):
                continue  # its first lines quoted (to point at them), not a change
            members = _members_kept(top, ours, lines, target, theirs, rows)
            if members is None:
                return None
            moved = _moved(lines, top, _indent(rows[target.line]))
            edits += members or [_Edit(target.start, target.end + 1, moved)]
            continue
        after = next((t for t in reversed(targets[:at]) if t is not None), None)
        sibling = after or next(t for t in targets[at + 1 :] if t is not None)
        indent = _indent(rows[sibling.line])
        gap = ["", ""] if not indent and ours.rel.endswith((".py", ".pyi")) else [""]
        new = _moved(lines, top, indent)
        if after is not None:
            edits.append(_Edit(after.end + 1, after.end + 1, gap + new))
        else:
            edits.append(_Edit(sibling.start, sibling.start, new + gap))
    return edits


def _quotes(block: list[str], definition: list[str]) -> bool:
    """The block's lines are some of the definition's, in order, without its last line: a quote
    of its start (a change that only deletes lines keeps the last one)."""
    mine = [line.strip() for line in block if line.strip()]
    theirs = [line.strip() for line in definition if line.strip()]
    rest = iter(theirs)
    subsequence = all(any(line == other for other in rest) for line in mine)
    return subsequence and len(mine) < len(theirs) and mine[-1:] != theirs[-1:]


def drops_module_lines(path: str, current: str, block: str) -> bool:
    """Whether ``block`` holds nothing but definitions (and imports) and, taken as ``path``'s whole
    new content, would drop lines of the file outside its functions and classes (a docstring, an
    import, ``__all__``, a statement): a fragment, not the file."""
    language = LANGUAGES.get(PurePosixPath(path).suffix.lower())
    if language is None:
        return False
    family = "python" if language == "python" else "javascript"
    source = textwrap.dedent(block.strip("\n")) + "\n"
    tops = [d for d in file_tags(path, source, language).definitions if d.parent is None]
    if not tops or _loose_lines(source.split("\n"), tops, family) is None:
        return False
    tags = file_tags(path, current, language)
    imported = _imported_names(source) if family == "python" else set()
    inside = {
        row
        for d in tags.definitions
        if d.kind != "constant" or d.name in imported  # a constant the block imports has moved
        for row in range(d.start, d.end + 1)
    }
    kept = {line.strip() for line in block.split("\n")}
    rows = current.split("\n")
    return any(row.strip() and row.strip() not in kept for at, row in enumerate(rows) if at not in inside)


def moves_names_out(path: str, current: str, block: str) -> bool:
    """Whether a Python ``block`` is the file rewritten with some of its module-level names moved to
    another module: it imports at least one name the file defines, and every top-level name of the
    file is either defined in the block or imported by it. Placing its definitions would keep the old
    bindings beside the imports."""
    if LANGUAGES.get(PurePosixPath(path).suffix.lower()) != "python":
        return False
    source = textwrap.dedent(block.strip("\n")) + "\n"
    imported = _imported_names(source)
    theirs = {d.name for d in file_tags(path, current, "python").definitions if d.parent is None}
    ours = {d.name for d in file_tags(path, source, "python").definitions if d.parent is None}
    return bool(theirs & imported) and theirs <= ours | imported


def _imported_names(source: str) -> set[str]:
    """The names a Python block's imports bind (``from config import RATE as R`` binds ``R``)."""
    module = python_module(source)
    if module is None:
        return set()
    return {
        (alias.asname or alias.name).split(".")[0]
        for node in module.body
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }


class _Ambiguous:
    pass


_AMBIGUOUS = _Ambiguous()


def _target(top: Definition, theirs: FileTags, within: Definition | None) -> Definition | _Ambiguous | None:
    same = [d for d in theirs.definitions if d.name == top.name]
    if within is not None:
        same = [d for d in same if d.parent == within.line]
    elif len(same) > 1:
        same = [d for d in same if d.parent is None] or same
    if len(same) > 1:
        return _AMBIGUOUS
    return same[0] if same else None


def _members_kept(
    top: Definition, ours: FileTags, lines: list[str], target: Definition, theirs: FileTags, rows: list[str]
) -> list[_Edit] | None:
    """A class of the block that leaves out members the file's class has: its members placed one
    by one ([] when the block's class is whole and replaces the file's; None when it cannot)."""
    mine = [d for d in ours.definitions if d.parent == top.line]
    kept = [d for d in theirs.definitions if d.parent == target.line]
    if not kept or {d.name for d in kept} <= {d.name for d in mine}:
        return []
    covered = {row for d in mine for row in range(d.start, d.end + 1)}
    header = set(range(top.line, top.line + len(top.header)))
    body = {rows[row].strip() for row in range(target.start, target.end + 1)}
    for row in range(top.start, top.end + 1):
        if row in covered or row in header or not lines[row].strip():
            continue
        if lines[row].strip() not in body:
            return None  # a class attribute changed: the class cannot be placed member by member
    return _placed(mine, ours, lines, theirs, rows, target)


def _moved(lines: list[str], definition: Definition, indent: str) -> list[str]:
    """The definition's lines (decorators included) at ``indent``."""
    own = _indent(lines[definition.line])
    moved = []
    for line in lines[definition.start : definition.end + 1]:
        if not line.strip():
            moved.append("")
        elif line.startswith(own):
            moved.append(indent + line[len(own) :])
        else:
            moved.append(indent + line.lstrip())
    return moved


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _import_row(current: str, rows: list[str], family: str) -> int:
    """Where new imports go: after the file's last top-level import, else after a Python module's
    docstring, else at the top."""
    last = None
    for row, line in enumerate(rows):
        if line == line.lstrip() and _IMPORT[family].match(line):
            last = row
    if last is not None:
        return last + 1
    if family == "python":
        module = python_module(current)
        if module is None:
            return 0
        first = module.body[0] if module.body else None
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and first.end_lineno:
            return first.end_lineno
    return 0

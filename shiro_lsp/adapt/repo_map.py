"""A map of the repository for a model that cannot read it all: each file's definitions (functions,
classes, methods, constants) found with tree-sitter, ranked by how much the rest of the code refers
to them, and rendered as the files' paths with the signature lines of their top definitions, within
a token budget. Aider's idea (its ``repomap.py``), written for Shiro's limits.

- **Tags.** The grammars' own ``tags.scm`` queries (shipped in the ``tree-sitter-python``,
  ``-javascript`` and ``-typescript`` wheels, nothing downloaded at run time), with a few more
  references for Python (imported names, base classes, annotations). Other files are listed by path.
- **Rank.** A graph of files, an edge from a file that refers to a name to each file that defines
  it, weighted as Aider weighs it (a name the user mentioned or a file they named counts more, a
  private or common name less), ranked by PageRank personalised toward what the user named. The
  power iteration is written here: networkx's ``pagerank`` needs scipy and numpy, 60 MB for 30 lines.
- **Bounded** on every side: files walked, bytes parsed per file, total seconds of parsing (a file
  not reached in time is listed, not parsed). Ignore files are honoured (the walk is ``list_dir``'s),
  folders of tools and virtual environments are not entered, secrets files are never listed or read,
  binaries and huge files are listed, not read. Every read goes through the confined reader
  (:func:`shiro_lsp.tools.files.open_text`).
- **Cached.** Tags are kept per file by (path, mtime, size), so a later turn parses only what
  changed. Blocking: callers run :meth:`RepoMap.scan` in a thread.
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from shiro_lsp.context.estimate import tokens_for_chars
from shiro_lsp.errors import ToolError
from shiro_lsp.fs.ignore import Entry, Walker
from shiro_lsp.fs.secrets import is_secret_path
from shiro_lsp.tools.files import open_text

if TYPE_CHECKING:
    import tree_sitter

LANGUAGES: Mapping[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
}
"""The languages whose definitions the map knows, by file suffix."""

_PYTHON_REFERENCES = """
(import_from_statement name: (dotted_name (identifier) @name))
(import_from_statement name: (aliased_import name: (dotted_name (identifier) @name)))
(class_definition superclasses: (argument_list (identifier) @name))
(type (identifier) @name)
"""
"""References the Python grammar's own query leaves out (it has calls only)."""

SKIPPED_FOLDERS = frozenset({"__pycache__", "node_modules", "site-packages", "dist", "build"})
"""Folders of generated files: never walked (hidden folders neither)."""
MAX_LINE_CHARS = 100
MAX_HEADER_LINES = 3
MAX_SHOWN_DEFINERS = 5
"""A name defined in more files than this says little about any of them (Aider's rule)."""


@dataclass(frozen=True)
class MapLimits:
    files: int = 5_000
    """Files walked at most."""
    parse_bytes: int = 256_000
    """A larger file is listed, not parsed."""
    seconds: float = 5.0
    """Parsing stops after this long; the files not reached are listed."""


@dataclass(frozen=True)
class Definition:
    name: str
    kind: str
    """function, method, class, constant, interface, module."""
    line: int
    """0-based row of its first line (its decorators not included)."""
    start: int
    """0-based row where it starts, decorators included."""
    end: int
    """0-based row of its last line."""
    header: tuple[str, ...]
    """Its signature lines, as in the file (indentation kept)."""
    parent: int | None = None
    """The ``line`` of the definition it is inside (a method's class), if any."""


@dataclass(frozen=True)
class FileTags:
    rel: str
    lines: int
    definitions: tuple[Definition, ...] = ()
    references: tuple[str, ...] = ()
    """The names the file refers to, once per use."""


@dataclass(frozen=True)
class Scan:
    """The repository as walked now: every file listed, and the tags of those parsed."""

    files: tuple[str, ...]
    tags: Mapping[str, FileTags]
    complete: bool
    """Every file was walked and every parsable one parsed within the limits."""
    sizes: Mapping[str, int] = field(default_factory=dict)
    """Each file's size in bytes."""

    def definers(self, name: str) -> list[tuple[str, Definition]]:
        """Where ``name`` is defined: (file, definition), in path order."""
        return [
            (rel, definition)
            for rel in sorted(self.tags)
            for definition in self.tags[rel].definitions
            if definition.name == name
        ]


class RepoMap:
    """The map of one workspace folder; keeps the tags of the files it parsed between scans."""

    def __init__(self, root: Path, limits: MapLimits | None = None) -> None:
        self.root = root
        self.limits = limits or MapLimits()
        self._cache: dict[str, tuple[tuple[int, int], FileTags]] = {}
        self._lock = threading.Lock()

    def scan(self) -> Scan:
        """Walk and parse what changed since the last scan. Blocking: call it in a thread."""
        with self._lock:
            return self._scan()

    def _scan(self) -> Scan:
        deadline = time.monotonic() + self.limits.seconds
        files: list[str] = []
        sizes: dict[str, int] = {}
        tags: dict[str, FileTags] = {}
        complete = True
        walker = Walker(self.root)
        for entry in walker.walk(walker.root, prune=_not_walked):
            if entry.is_dir or is_secret_path(entry.rel):
                continue
            if len(files) == self.limits.files:
                complete = False
                break
            try:
                stat = entry.path.stat()
            except OSError:
                continue
            files.append(entry.rel)
            sizes[entry.rel] = stat.st_size
            language = LANGUAGES.get(Path(entry.rel).suffix.lower())
            if language is None or stat.st_size > self.limits.parse_bytes:
                continue
            key = (stat.st_mtime_ns, stat.st_size)
            cached = self._cache.get(entry.rel)
            if cached is not None and cached[0] == key:
                tags[entry.rel] = cached[1]
                continue
            if time.monotonic() > deadline:
                complete = False
                continue
            parsed = self._parse(entry, language)
            if parsed is not None:
                self._cache[entry.rel] = (key, parsed)
                tags[entry.rel] = parsed
        for gone in self._cache.keys() - set(files):
            del self._cache[gone]
        return Scan(tuple(files), tags, complete, sizes)

    def _parse(self, entry: Entry, language: str) -> FileTags | None:
        try:
            with open_text(self.root, entry.rel) as handle:  # refuses secrets files and binaries
                source = handle.read(self.limits.parse_bytes + 1)
        except (ToolError, OSError, ValueError):
            return None
        if len(source) > self.limits.parse_bytes:
            return None
        return file_tags(entry.rel, source, language)


_MAPS: dict[Path, RepoMap] = {}
"""The maps of the workspaces asked for (their tags cached), the most recent last."""
_MAPS_LOCK = threading.Lock()
MAX_MAPS = 8


def repo_map_of(root: Path) -> RepoMap:
    """The map of ``root``, kept between turns (and shared by the view and the reply's reading)."""
    root = Path(os.path.realpath(root))  # one map per folder, however its path is written
    with _MAPS_LOCK:
        repo_map = _MAPS.pop(root, None) or RepoMap(root)
        _MAPS[root] = repo_map
        while len(_MAPS) > MAX_MAPS:
            del _MAPS[next(iter(_MAPS))]
        return repo_map


def _not_walked(entry: Entry) -> bool:
    name = entry.rel.rsplit("/", 1)[-1]
    return name.startswith(".") or name in SKIPPED_FOLDERS or (entry.path / "pyvenv.cfg").exists()


# --- tags -------------------------------------------------------------------------------------


@cache
def _grammar(language: str) -> tuple[tree_sitter.Parser, tree_sitter.Query]:
    """The parser and tags query of a language, built once (a query takes up to 0.3 s to compile)."""
    import tree_sitter

    if language == "python":
        import tree_sitter_python as python

        return _built(tree_sitter.Language(python.language()), python.TAGS_QUERY + _PYTHON_REFERENCES)
    import tree_sitter_javascript as javascript

    if language == "javascript":
        return _built(tree_sitter.Language(javascript.language()), javascript.TAGS_QUERY)
    import tree_sitter_typescript as typescript  # its queries add to JavaScript's

    binding = typescript.language_tsx() if language == "tsx" else typescript.language_typescript()
    return _built(tree_sitter.Language(binding), javascript.TAGS_QUERY + typescript.TAGS_QUERY)


def _built(language: tree_sitter.Language, query: str) -> tuple[tree_sitter.Parser, tree_sitter.Query]:
    import tree_sitter

    return tree_sitter.Parser(language), tree_sitter.Query(language, query)


def parse_tree(source: str, language: str) -> tree_sitter.Tree:
    return _grammar(language)[0].parse(source.encode("utf-8"))


def file_tags(rel: str, source: str, language: str) -> FileTags:
    """The definitions and references of one file's ``source``."""
    import tree_sitter

    query = _grammar(language)[1]
    tree = parse_tree(source, language)
    rows = source.split("\n")
    found: dict[tuple[int, int], tuple[str, str, tree_sitter.Node]] = {}
    references: list[str] = []
    for _, captures in tree_sitter.QueryCursor(query).matches(tree.root_node):
        names = captures.get("name", [])
        text = names[0].text if names else None
        if text is None:
            continue
        name = text.decode("utf-8", errors="replace")
        kinds = [tag for tag in captures if tag.startswith("definition.")]
        if not kinds:
            references.append(name)
            continue
        node = captures[kinds[0]][0]
        found.setdefault((node.start_byte, node.end_byte), (name, kinds[0].removeprefix("definition."), node))
    lines = {key: node.start_point.row for key, (_, _, node) in found.items()}
    definitions = tuple(
        _definition(name, kind, node, rows, lines) for _, (name, kind, node) in sorted(found.items())
    )
    return FileTags(rel, len(rows), definitions, tuple(references))


def _definition(
    name: str, kind: str, node: tree_sitter.Node, rows: list[str], lines: Mapping[tuple[int, int], int]
) -> Definition:
    line = node.start_point.row
    start = line
    wrapper = node.parent
    if wrapper is not None and wrapper.type in ("decorated_definition", "export_statement"):
        start = wrapper.start_point.row
    parent = wrapper
    while parent is not None and not _encloses(parent, node, lines):
        parent = parent.parent
    header = rows[line : _header_end(node) + 1][:MAX_HEADER_LINES]
    return Definition(
        name,
        kind,
        line,
        start,
        node.end_point.row,
        tuple(row.rstrip()[:MAX_LINE_CHARS] for row in header),
        None if parent is None else lines[(parent.start_byte, parent.end_byte)],
    )


def _encloses(parent: tree_sitter.Node, node: tree_sitter.Node, lines: Mapping[tuple[int, int], int]) -> bool:
    """``parent`` is a definition other than ``node`` (a class's body of one method spans just as much)."""
    key = (parent.start_byte, parent.end_byte)
    return key in lines and key != (node.start_byte, node.end_byte)


def _header_end(node: tree_sitter.Node) -> int:
    """The row a definition's signature ends on: that of the last piece before its body (a
    comment between them left out); the first row for a definition without a body."""
    body = node.child_by_field_name("body")
    if body is None:
        return node.start_point.row
    before = [
        child.end_point.row
        for child in node.children
        if child.start_byte < body.start_byte and child.type != "comment"
    ]
    return max([node.start_point.row, *before])


# --- rank -------------------------------------------------------------------------------------

Ranked = tuple[str, Definition | None]
"""A file and one of its definitions, or a file alone."""


def ranked(scan: Scan, files: Collection[str] = (), names: Collection[str] = ()) -> list[Ranked]:
    """The definitions of the repository, most referred to first, personalised toward ``files``
    (those the user named or is working on) and ``names`` (identifiers the user mentioned); then
    the files with no definition ranked, by their own rank, then the rest in path order."""
    defines: dict[str, set[str]] = defaultdict(set)
    references: dict[str, list[str]] = defaultdict(list)
    for rel, tags in scan.tags.items():
        for definition in tags.definitions:
            defines[definition.name].add(rel)
        for name in tags.references:
            references[name].append(rel)
    edges: dict[str, dict[tuple[str, str], float]] = defaultdict(dict)  # source -> (target, name) -> weight
    for name, definers in defines.items():
        users = Counter(references.get(name, ()))
        if not users:
            for definer in definers:
                edges[definer][(definer, name)] = 0.1
            continue
        weight = _name_weight(name, len(definers), name in names)
        for user, count in users.items():
            for definer in definers:
                boost = 50.0 if user in files else 1.0
                edges[user][(definer, name)] = weight * boost * math.sqrt(count)
    nodes = sorted(set(scan.tags) | set(edges))
    personal = {rel: 1.0 for rel in nodes if rel in files or _path_mentions(rel, names)}
    links: dict[str, dict[str, float]] = {}
    for source, out in edges.items():
        summed = links.setdefault(source, defaultdict(float))
        for (definer, _), weight in out.items():
            summed[definer] += weight
    rank = pagerank(nodes, links, personal)
    by_definition: dict[tuple[str, str], float] = defaultdict(float)
    for source in nodes:
        out = edges.get(source, {})
        total = sum(out.values())
        for target, weight in sorted(out.items()):
            by_definition[target] += rank[source] * weight / total
    result: list[Ranked] = []
    for (rel, name), _ in sorted(by_definition.items(), key=lambda item: (-item[1], item[0])):
        shown = _outer_definitions(scan.tags[rel])
        result.extend((rel, d) for d in shown if d.name == name)
    placed = {rel for rel, _ in result}
    for rel in sorted(nodes, key=lambda rel: (-rank[rel], rel)):
        if rel not in placed:
            result.append((rel, None))
            placed.add(rel)
    result.extend((rel, None) for rel in scan.files if rel not in placed)
    return result


def _name_weight(name: str, definers: int, mentioned: bool) -> float:
    weight = 1.0
    if mentioned:
        weight *= 10
    symbol_like = "_" in name.strip("_") or (name != name.lower() and name != name.upper())
    if symbol_like and len(name) >= 8:
        weight *= 10
    if name.startswith("_"):
        weight *= 0.1
    if definers > MAX_SHOWN_DEFINERS:
        weight *= 0.1
    return weight


def _path_mentions(rel: str, names: Collection[str]) -> bool:
    path = Path(rel)
    return bool({*path.parts, path.stem} & set(names))


def pagerank(
    nodes: list[str],
    links: Mapping[str, Mapping[str, float]],
    personal: Mapping[str, float],
    *,
    damping: float = 0.85,
    rounds: int = 100,
    tolerance: float = 1e-8,
) -> dict[str, float]:
    """PageRank by power iteration over weighted links (source -> target -> weight); a node with
    no way out, and the jump, lead to the ``personal`` nodes (to every node alike when none)."""
    if not nodes:
        return {}
    index = {node: at for at, node in enumerate(nodes)}
    weights = personal if any(personal.values()) else dict.fromkeys(nodes, 1.0)
    total = sum(weights.values())
    jump = [weights.get(node, 0.0) / total for node in nodes]
    out: list[list[tuple[int, float]]] = []
    for node in nodes:
        linked = links.get(node, {})
        weight = sum(linked.values())
        out.append([(index[to], w / weight) for to, w in sorted(linked.items())] if weight else [])
    rank = list(jump)
    for _ in range(rounds):
        dangling = sum(rank[at] for at in range(len(nodes)) if not out[at])
        new = [(1 - damping + damping * dangling) * share for share in jump]
        for at, shares in enumerate(out):
            flow = damping * rank[at]
            for to, share in shares:
                new[to] += flow * share
        change = sum(abs(a - b) for a, b in zip(new, rank, strict=True))
        rank = new
        if change < tolerance * len(nodes):
            break
    return dict(zip(nodes, rank, strict=True))


# --- render -----------------------------------------------------------------------------------


def render(
    scan: Scan,
    entries: list[Ranked],
    tokens: int,
    *,
    skip: Collection[str] = (),
    count_tokens: Callable[[str], int] | None = None,
) -> str:
    """The most entries of ``entries`` (in their order) whose rendering fits in ``tokens``: each
    file's path, then the signature lines of its chosen definitions (and of the classes they are
    in), files in path order. ``skip``: files shown elsewhere. '' when nothing fits."""
    measure = count_tokens or (lambda text: tokens_for_chars(len(text)))
    entries = [entry for entry in entries if entry[0] not in skip]
    best, low, high = "", 0, len(entries)
    while low <= high:  # the longest prefix that fits: a binary search on its length
        middle = (low + high) // 2
        text = _rendered(scan, entries[:middle])
        if measure(text) <= tokens:
            best, low = text, middle + 1
        else:
            high = middle - 1
    return best


def _rendered(scan: Scan, entries: Iterable[Ranked]) -> str:
    chosen: dict[str, set[int]] = {}
    for rel, definition in entries:
        chosen.setdefault(rel, set())
        if definition is not None:
            chosen[rel].add(definition.line)
    blocks = []
    for rel in sorted(chosen):
        lines = outline(scan.tags[rel], chosen[rel]) if chosen[rel] else ""
        blocks.append(f"{rel}:\n{lines}" if lines else rel)
    return "\n".join(blocks)


def outline(tags: FileTags, lines: Collection[int] | None = None) -> str:
    """The signature lines of a file's definitions (those starting on ``lines``; None: all but the
    helpers inside a function), each under the signature of the definition it is inside."""
    by_line = {definition.line: definition for definition in tags.definitions}
    shown: set[int] = set()
    for definition in tags.definitions:
        if lines is None and _inside_function(definition, by_line):
            continue
        if lines is None or definition.line in lines:
            at: int | None = definition.line
            while at is not None and at in by_line and at not in shown:
                shown.add(at)
                at = by_line[at].parent
    return "\n".join(line for at in sorted(shown) for line in by_line[at].header)


def _outer_definitions(tags: FileTags) -> list[Definition]:
    """A file's definitions but the helpers inside a function."""
    by_line = {definition.line: definition for definition in tags.definitions}
    return [d for d in tags.definitions if not _inside_function(d, by_line)]


def _inside_function(definition: Definition, by_line: Mapping[int, Definition]) -> bool:
    parent = by_line.get(definition.parent) if definition.parent is not None else None
    while parent is not None:
        if parent.kind in ("function", "method"):
            return True
        parent = by_line.get(parent.parent) if parent.parent is not None else None
    return False
